//! A payment event as the payment service sends it, and as `payment_events` records it:
//! its types, who told of it ([`Source`]) and the id and reference it is recorded under.

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use serde::Deserialize;
use uuid::Uuid;

use crate::db::schema::payment_events;

/// The event types of the contract.
pub const CAPTURED: &str = "payment_captured";
pub const DECLINED: &str = "payment_declined";

/// Who tells of a payment: the payment service's webhook, or the sync reading it back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    Webhook,
    Sync,
}

/// The sync's event ids begin with this; a webhook's id that does too is recorded under
/// `WEBHOOK_PREFIX`.
pub const SYNC_PREFIX: &str = "sync:";
const WEBHOOK_PREFIX: &str = "webhook:";

impl Source {
    /// The id an event is recorded under. The sync's ids and the payment service's share
    /// one key (events are idempotent by id), so a webhook's id that could be mistaken for
    /// the sync's (`sync:…`), or for one so moved (`webhook:…`), is recorded as
    /// `webhook:<id>`: no delivery can take the id of a payment the sync reads back, and
    /// every other id is recorded as sent.
    pub fn recorded_id(self, id: &str) -> std::borrow::Cow<'_, str> {
        match self {
            Source::Webhook if id.starts_with(SYNC_PREFIX) || id.starts_with(WEBHOOK_PREFIX) => {
                std::borrow::Cow::Owned(format!("{WEBHOOK_PREFIX}{id}"))
            }
            Source::Webhook | Source::Sync => std::borrow::Cow::Borrowed(id),
        }
    }
}

/// A delivery as `payment_events` keeps it: a readable event (`pending` until decided) or
/// an unreadable one (`unreadable`, see [`super::unreadable`]).
#[derive(Insertable)]
#[diesel(table_name = payment_events, treat_none_as_default_value = false)]
pub struct EventRecord<'a> {
    pub id: &'a str,
    pub kind: &'a str,
    pub reference: &'a str,
    pub payment_id: Option<&'a str>,
    pub amount_minor: Option<i64>,
    pub currency: Option<&'a str>,
    pub outcome: &'a str,
    /// The raw body, kept only for an event of a type this service does not know.
    pub body: Option<&'a str>,
}

impl EventRecord<'_> {
    /// Records the delivery unless its id is recorded already: `false` for a redelivery.
    /// The caller holds the payment's lock ([`crate::payments::attempts::lock_payment`]).
    pub async fn insert_new(&self, conn: &mut AsyncPgConnection) -> QueryResult<bool> {
        let inserted = diesel::insert_into(payment_events::table)
            .values(self)
            .on_conflict_do_nothing()
            .execute(conn)
            .await?;
        Ok(inserted > 0)
    }
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[schema(as = PaymentEvent)]
pub struct Event {
    pub id: String,
    /// payment_captured or payment_declined.
    #[serde(rename = "type")]
    pub kind: String,
    pub data: EventData,
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[schema(as = PaymentEventData)]
pub struct EventData {
    /// The order's correlation_id.
    pub reference: String,
    pub payment_id: Option<String>,
    pub provider: Option<String>,
    pub amount_minor: Option<i64>,
    pub currency: Option<String>,
}

/// The reference as it is recorded: a UUID in its canonical text (lower-case hyphenated),
/// however the sender spelled it (upper case, braces, the 32-hex form), so that every
/// event of an order is found under one text; anything else as sent.
pub fn canonical_reference(reference: &str) -> String {
    reference
        .parse::<Uuid>()
        .map_or_else(|_| reference.to_owned(), |id| id.to_string())
}
