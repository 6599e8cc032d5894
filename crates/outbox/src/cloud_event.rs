//! An outbox row as the CloudEvents 1.0 JSON message that goes to JetStream (its structured
//! mode: the envelope and the data in one JSON object). `subject` is the client's id, and an
//! event about no client (a catalogue change, a capture of no known order) has none; points
//! and money are decimal text, exactly as the database holds them; no phone, name or e-mail
//! is in any event.

use chrono::{DateTime, SecondsFormat, Utc};
use diesel::QueryableByName;
use diesel::sql_types::{BigInt, Jsonb, Nullable, Text, Timestamptz, Uuid as SqlUuid};
use serde_json::{Map, Value, json};
use uuid::Uuid;

use super::EventType;

/// One unpublished row of `event_outbox`.
#[derive(Debug, Clone, QueryableByName)]
pub struct Pending {
    #[diesel(sql_type = BigInt)]
    pub id: i64,
    #[diesel(sql_type = SqlUuid)]
    pub event_id: Uuid,
    #[diesel(sql_type = Text)]
    pub event_type: String,
    #[diesel(sql_type = Nullable<BigInt>)]
    pub client_id: Option<i64>,
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

    /// The CloudEvent from `source` (`/loyalty/point-service`), in this key order.
    pub fn cloud_event(&self, event_type: EventType, source: &str) -> Value {
        let mut event = Map::new();
        event.insert("specversion".into(), json!("1.0"));
        event.insert("id".into(), json!(self.event_id.to_string()));
        event.insert("source".into(), json!(source));
        event.insert("type".into(), json!(event_type.subject()));
        if let Some(client_id) = self.client_id {
            event.insert("subject".into(), json!(client_id.to_string()));
        }
        let time = self
            .occurred_at
            .to_rfc3339_opts(SecondsFormat::Micros, true);
        event.insert("time".into(), json!(time));
        event.insert("datacontenttype".into(), json!("application/json"));
        event.insert("data".into(), self.data.clone());
        Value::Object(event)
    }
}
