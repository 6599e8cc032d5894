//! The loyalty events other systems read (docs/decisions.md, "Events";
//! `docs/api/events.yaml`). Each database that owns such changes has an `event_outbox` table,
//! written by triggers in the transaction of the change itself, so no change commits without
//! its event and no event exists for a change that rolled back:
//! - `points` (the point service): every ledger entry, every "expiring soon" notice, a point
//!   order's outcome, a capture listed for refund, a back-office change of an offer, an
//!   occasion or the expiry policy (`migrations/points/..._event_outbox`, `..._more_events`);
//! - `catalog` (the order service): a gift code's credited redemption, a back-office change
//!   of the earn-rate table (`migrations/catalog/..._event_outbox`).
//!
//! Each service's [`publisher`] sends its outbox to NATS JetStream as CloudEvents
//! ([`cloud_event`]), at least once, in commit order per client and source, with the event's id as
//! JetStream's message id: a republish inside the stream's duplicate window is dropped, and a
//! consumer dedupes by `id` beyond it. Both publish to one stream.
//!
//! Variables (each service's):
//! - `NATS_URL` (unset): the NATS server, `nats://host:port`. Unset, nothing is published and
//!   the events wait in the outbox (logged at start).
//! - `EVENTS_POLL_MS` (default `500`, 10 to 10000): how often the publisher looks for new
//!   events once the outbox is empty.
//! - `EVENTS_STREAM_REPLICAS` (default `1`, 1 to 5): the copies JetStream keeps of the stream
//!   the publisher makes (3 on production's three NATS servers).

pub mod cloud_event;
pub mod gauges;
pub mod publisher;

use std::time::Duration;

use server::Env;

/// The JetStream stream of the events, created by the publisher when missing.
pub const STREAM: &str = "LOYALTY_EVENTS";
/// Every event's subject starts so: `loyalty.<type>`, e.g. `loyalty.points.credited`.
pub const SUBJECT_PREFIX: &str = "loyalty.";
/// How long JetStream remembers a message id: a republish within it is dropped. Well above
/// the publisher's lease, so a row sent again by the replica that takes over after a crash
/// is still dropped.
pub const DUPLICATE_WINDOW: Duration = Duration::from_secs(10 * 60);

/// An event's type, as an outbox stores it (its `CHECK`, each database's own types) and,
/// after [`SUBJECT_PREFIX`], as its subject and CloudEvents `type`. One list for both
/// sources, as `docs/api/events.yaml` has one message per type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventType {
    /// A ledger entry that adds points: earn, purchase, gift received, gift card, a credit
    /// adjustment.
    PointsCredited,
    /// A ledger entry that takes points: a spend, a gift sent, a debit adjustment.
    PointsSpent,
    /// The expiry job took the client's balance.
    PointsExpired,
    /// The client's balance expires within a notice's days (the expiry job's notices).
    PointsExpiring,
    /// A point order made here became successful (its points credited), for its payer.
    OrderSuccessful,
    /// A point order's payment failed (nothing credited), for its payer.
    OrderPaymentFailed,
    /// A capture took money and credited nothing: listed for refund.
    CaptureUnapplied,
    /// A gift code's redemption was credited (the order service's catalog).
    GiftCodeRedeemed,
    /// The back office changed what the app sells: an offer, an occasion, the expiry policy,
    /// the earn-rate table.
    CatalogChanged,
}

impl EventType {
    pub const ALL: [EventType; 9] = [
        EventType::PointsCredited,
        EventType::PointsSpent,
        EventType::PointsExpired,
        EventType::PointsExpiring,
        EventType::OrderSuccessful,
        EventType::OrderPaymentFailed,
        EventType::CaptureUnapplied,
        EventType::GiftCodeRedeemed,
        EventType::CatalogChanged,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            EventType::PointsCredited => "points.credited",
            EventType::PointsSpent => "points.spent",
            EventType::PointsExpired => "points.expired",
            EventType::PointsExpiring => "points.expiring",
            EventType::OrderSuccessful => "order.successful",
            EventType::OrderPaymentFailed => "order.payment_failed",
            EventType::CaptureUnapplied => "capture.unapplied",
            EventType::GiftCodeRedeemed => "giftcode.redeemed",
            EventType::CatalogChanged => "catalog.changed",
        }
    }

    /// The type stored as `text`.
    pub fn parse(text: &str) -> Option<EventType> {
        EventType::ALL.into_iter().find(|t| t.as_str() == text)
    }

    /// The subject and CloudEvents `type`: `loyalty.points.credited`.
    pub fn subject(self) -> String {
        format!("{SUBJECT_PREFIX}{}", self.as_str())
    }
}

/// The publisher's settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventSettings {
    /// `NATS_URL`; `None`: nothing is published.
    pub nats_url: Option<String>,
    /// `EVENTS_POLL_MS`.
    pub poll: Duration,
    /// Rows read, published and then marked together: at most this many are sent again after
    /// a crash.
    pub batch: i64,
    /// How long a publisher whose round failed sits out, its lease given back, so that
    /// another replica takes over: the lease's length.
    pub after_failure: Duration,
    /// `EVENTS_STREAM_REPLICAS`: the copies JetStream keeps of the stream (3 on production's
    /// three NATS servers, so that losing one loses nothing).
    pub stream_replicas: usize,
}

impl Default for EventSettings {
    fn default() -> Self {
        Self {
            nats_url: None,
            poll: Duration::from_millis(500),
            batch: 20,
            after_failure: Duration::from_secs(30),
            stream_replicas: 1,
        }
    }
}

impl EventSettings {
    pub fn from_env(env: &mut Env) -> Self {
        let defaults = Self::default();
        Self {
            nats_url: env.optional("NATS_URL"),
            poll: env.millis_or("EVENTS_POLL_MS", defaults.poll, 10..=10_000),
            batch: defaults.batch,
            after_failure: defaults.after_failure,
            stream_replicas: env.int_or("EVENTS_STREAM_REPLICAS", 1, 1..=5) as usize,
        }
    }
}

/// Starts a service's events work until shutdown, on the current runtime: its publisher
/// (which only says, without `NATS_URL`, that the events wait in the outbox) and its outbox
/// gauges. `holder` is this replica's name in the lease, `source` the CloudEvents `source`.
pub fn start(pool: db::Pool, settings: EventSettings, holder: String, source: &'static str) {
    let publisher = publisher::Publisher {
        pool: pool.clone(),
        settings,
        holder,
        source,
    };
    tokio::spawn(publisher::run(publisher, server::shutdown_watch()));
    gauges::spawn(pool, server::shutdown_watch());
}
