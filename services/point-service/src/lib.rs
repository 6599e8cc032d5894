//! The point service: the points ledger, offers, occasions, point orders and their card
//! payments, the payment webhook and the internal credit route. The app never calls it
//! directly: the order service relays the point routes to it.

pub mod back_office;
pub mod balance;
pub mod clients;
pub mod config;
pub mod db;
pub mod error;
pub mod expiry;
pub mod handlers;
pub mod housekeeping;
pub mod internal_access;
pub mod ledger;
pub mod metric_families;
pub mod numbers;
pub mod offers;
pub mod order_body;
pub mod orders;
pub mod payments;
pub mod reports;
pub mod riyadh;
pub mod routes;
pub mod seed;
pub mod startup;
pub mod state;

/// The binary's name, used in logs, traces and metrics.
pub const SERVICE: &str = "point-service";
/// `BIND_ADDR`'s default port.
pub const DEFAULT_PORT: u16 = 8083;
