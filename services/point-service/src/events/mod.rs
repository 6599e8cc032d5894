//! The points events other systems read (docs/decisions.md, "Events"): every change of a
//! client's points is an event in the `event_outbox` table, written by the ledger's trigger in
//! the transaction of the change (`migrations/points/..._event_outbox`), so no change commits
//! without its event and no event exists for a change that rolled back; so is every
//! "expiring soon" notice (`expiry::notices`). The [`publisher`]
//! sends them to NATS JetStream as CloudEvents ([`cloud_event`]), at least once, in commit
//! order per client, with the event's id as JetStream's message id: a republish inside the
//! stream's duplicate window is dropped, and a consumer dedupes by `id` beyond it.
//!
//! Variables:
//! - `NATS_URL` (unset): the NATS server, `nats://host:port`. Unset, nothing is published and
//!   the events wait in the outbox (logged at start).
//! - `EVENTS_POLL_MS` (default `500`, 10 to 10000): how often the publisher looks for new
//!   events once the outbox is empty.

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

/// An event's type, as the outbox stores it (its `CHECK`) and, after [`SUBJECT_PREFIX`], as
/// its subject and CloudEvents `type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventType {
    /// A ledger entry that adds points: earn, purchase, gift received, gift card, a credit
    /// adjustment.
    PointsCredited,
    /// A ledger entry that takes points: a spend, a gift sent, a debit adjustment.
    PointsSpent,
    /// The expiry job took the client's balance.
    PointsExpired,
    /// The client's balance expires within a notice's days (`expiry::notices`).
    PointsExpiring,
}

impl EventType {
    pub const ALL: [EventType; 4] = [
        EventType::PointsCredited,
        EventType::PointsSpent,
        EventType::PointsExpired,
        EventType::PointsExpiring,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            EventType::PointsCredited => "points.credited",
            EventType::PointsSpent => "points.spent",
            EventType::PointsExpired => "points.expired",
            EventType::PointsExpiring => "points.expiring",
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
}

impl Default for EventSettings {
    fn default() -> Self {
        Self {
            nats_url: None,
            poll: Duration::from_millis(500),
            batch: 20,
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
        }
    }
}
