//! The order service: the app's single address for `/api/v2/client`. It relays the point
//! routes to the point service and serves the rest itself from the `catalog` database:
//! earn rates, gift-card codes, services (system categories) and stores; and the loyalty
//! back office's catalog routes (gift-code batches, the earn-rate table), which the operator
//! service relays to it.

pub mod back_office;
pub mod config;
pub mod error;
pub mod gift_cards;
pub mod handlers;
pub mod housekeeping;
pub mod metric_families;
pub mod nearest;
pub mod point_rates;
pub mod relay;
pub mod relayed_routes;
pub mod routes;
pub mod seed;
pub mod startup;
pub mod state;
pub mod stores;
pub mod system_categories;

/// The binary's name, used in logs, traces and metrics.
pub const SERVICE: &str = "order-service";
/// `BIND_ADDR`'s default port.
pub const DEFAULT_PORT: u16 = 8082;
