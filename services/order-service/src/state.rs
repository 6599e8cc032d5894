//! What every handler may need, built once at start.

use std::time::Duration;

use server::caller::CallerLookup;

use crate::config::{CreditTarget, GiftCardRetry};
use crate::nearest::BranchIndexes;
use crate::system_categories::ChildrenCache;

#[derive(Clone)]
pub struct AppState {
    pub pool: db::Pool,
    pub relay: Relay,
    pub caller: CallerLookup,
    pub credit: Credit,
    pub children: ChildrenCache,
    pub branches: BranchIndexes,
    pub tries_per_client: i64,
    pub tries_per_ip: i64,
    pub trust_forwarded_for: bool,
    pub gift_card_retry: GiftCardRetry,
}

/// The point service as the relay sees it.
#[derive(Clone)]
pub struct Relay {
    pub upstream: crate::relay::Upstream,
    pub timeout: Duration,
    pub pay_timeout: Duration,
}

/// Where and how gift-card credit goes.
#[derive(Clone)]
pub struct Credit {
    /// Where the redemptions this process makes are credited (`USE_POINT_SERVICE`); each
    /// redemption then keeps its own (`crate::gift_cards::credit`).
    pub target: CreditTarget,
    /// `LEGACY_URL`, when set: what a redemption made for the legacy system is sent to,
    /// whatever `target` says.
    pub legacy_url: Option<String>,
    pub point_service: String,
    /// Signs the calls to the point service.
    pub signer: std::sync::Arc<service_identity::Signer>,
    pub http: telemetry::client::HttpClient,
}
