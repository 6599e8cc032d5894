//! The operator service: services (system categories) and their parent/child hierarchy for
//! the admin panel (`/api/v1/operator/...`), over the `catalog` database it shares with the
//! order service; and the loyalty back office's routes over points data, relayed to the
//! point service that owns it (`point_service`).

pub mod auth;
pub mod back_office;
pub mod config;
pub mod error;
pub mod hierarchy;
pub mod query;
pub mod routes;
pub mod seed;
pub mod startup;
pub mod state;

/// The binary's name, used in logs, traces and metrics.
pub const SERVICE: &str = "operator-service";
/// `BIND_ADDR`'s default port.
pub const DEFAULT_PORT: u16 = 8084;
