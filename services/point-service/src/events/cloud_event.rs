//! An outbox row as the CloudEvents 1.0 JSON message that goes to JetStream (its structured
//! mode: the envelope and the data in one JSON object). `subject` is the client's id; the
//! points are decimal text, exactly as the ledger holds them; no phone, name or e-mail is in
//! any event.

use chrono::{DateTime, SecondsFormat, Utc};
use diesel::QueryableByName;
use diesel::sql_types::{BigInt, Jsonb, Text, Timestamptz, Uuid as SqlUuid};
use serde_json::{Value, json};
use uuid::Uuid;

use super::EventType;

/// Where the events come from (CloudEvents `source`).
pub const SOURCE: &str = "/loyalty/point-service";

/// One unpublished row of `event_outbox`.
#[derive(Debug, Clone, QueryableByName)]
pub struct Pending {
    #[diesel(sql_type = BigInt)]
    pub id: i64,
    #[diesel(sql_type = SqlUuid)]
    pub event_id: Uuid,
    #[diesel(sql_type = Text)]
    pub event_type: String,
    #[diesel(sql_type = BigInt)]
    pub client_id: i64,
    #[diesel(sql_type = Jsonb)]
    pub data: Value,
    #[diesel(sql_type = Timestamptz)]
    pub occurred_at: DateTime<Utc>,
}

/// Why a row cannot be sent: its type is none the code knows (the column's `CHECK` and
/// [`EventType`] disagree).
#[derive(Debug, thiserror::Error)]
#[error("event {event_id} has the type {found:?}, which is none of EventType's")]
pub struct UnknownType {
    pub event_id: Uuid,
    pub found: String,
}

impl Pending {
    pub fn event_type(&self) -> Result<EventType, UnknownType> {
        EventType::parse(&self.event_type).ok_or_else(|| UnknownType {
            event_id: self.event_id,
            found: self.event_type.clone(),
        })
    }

    /// The CloudEvent, in this key order.
    pub fn cloud_event(&self, event_type: EventType) -> Value {
        json!({
            "specversion": "1.0",
            "id": self.event_id.to_string(),
            "source": SOURCE,
            "type": event_type.subject(),
            "subject": self.client_id.to_string(),
            "time": self.occurred_at.to_rfc3339_opts(SecondsFormat::Micros, true),
            "datacontenttype": "application/json",
            "data": self.data,
        })
    }
}
