//! The loyalty back office's changes to points data (no HTTP in here): each made in one
//! transaction with its audit row, for the operator the operator service names
//! (docs/decisions.md, "The loyalty back office"). The contract, bodies and refusals are the
//! `back_office` crate's.

pub mod adjustments;
pub mod audit;
pub mod offers;
