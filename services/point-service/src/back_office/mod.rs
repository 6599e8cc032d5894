//! The loyalty back office's changes to points data (no HTTP in here): each made in one
//! transaction with its audit row, for the operator the operator service names
//! (docs/decisions.md, "The loyalty back office"). The contract, bodies and refusals are the
//! `back_office` crate's.

pub mod adjustments;
pub mod expiry_policy;
pub mod occasions;
pub mod offer_limit;
pub mod offers;

/// A new record's id: 24 random hex characters (96 bits), the legacy store's form.
fn new_id() -> String {
    uuid::Uuid::new_v4().simple().to_string()[..24].to_owned()
}
