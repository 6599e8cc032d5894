//! What every handler may need, built once at start.

use std::time::Duration;

use server::Secret;

use crate::clients::auth::AuthClient;
use crate::config::{Flags, Limits, SyncSettings};
use crate::payments::client::PaymentClient;

#[derive(Clone)]
pub struct AppState {
    pub pool: db::Pool,
    pub auth: AuthClient,
    pub payments: PaymentClient,
    pub flags: Flags,
    /// Checks the credentials of calls to its internal routes.
    pub identity: service_identity::Verifier,
    pub webhook_secret: Secret,
    /// How long a pay call's attempt counts as in flight (`payments::attempts::in_flight_window`).
    pub attempt_window: Duration,
    pub limits: Limits,
    /// The payment sync's pace (`payments::sync`); pay attempts schedule it.
    pub sync: SyncSettings,
    /// `OFFER_MAX_POINTS_PER_SAR` (`back_office::offer_limit`).
    pub offer_max_points_per_sar: Option<bigdecimal::BigDecimal>,
    /// Writes the point orders paid with points, in batches (`orders::batches`).
    pub batcher: crate::orders::Batcher,
}
