//! What every handler may need, built once at start (each keeper's HTTP client once per
//! worker).

use crate::back_office::upstream::Upstream;

#[derive(Clone)]
pub struct AppState {
    pub pool: db::Pool,
    /// Offers, occasions, the expiry policy, clients' points.
    pub point_service: Upstream,
    /// Gift-code batches, the earn-rate table.
    pub order_service: Upstream,
}
