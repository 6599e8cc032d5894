//! A correctly signed event whose body is not an [`Event`](super::Event) (a number where
//! text belongs, a missing field, not JSON at all). The payment service sent it, so it may
//! be a capture: money taken. Answering 400 and keeping nothing would take that money
//! without points in silence; instead what can be read is recorded (outcome `unreadable`)
//! and, unless it says it is a decline, the capture is listed for refund with the reason
//! `unreadable`, logged at error level and counted. The answer stays 400: the same bytes
//! again cannot be read either, and they are recorded (and listed) once.

use diesel::prelude::*;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use serde_json::Value;
use sha2::{Digest, Sha256};
use uuid::Uuid;

use crate::db::schema::point_orders;
use crate::error::PointError;
use crate::ledger;
use crate::payments::attempts;
use crate::payments::machine::Unapplied;
use crate::payments::unapplied::{self, Listing};
use crate::payments::webhook::EventRecord;

/// What could be read of the body, each field best-effort.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unreadable {
    /// The body's `id` as text, or `unreadable:<hex SHA-256 of the body>` when it has none,
    /// so the same bytes are always the same event.
    pub id: String,
    /// The body's `type`; empty when missing or not text.
    pub kind: String,
    /// The body's `data.reference`, canonical when it is a UUID; empty when missing.
    pub reference: String,
    pub payment_id: Option<String>,
    /// Only an integer: `1500.0` or `"1500"` says no amount we could trust.
    pub amount_minor: Option<i64>,
    pub currency: Option<String>,
}

/// A string as is, a number as its JSON text (exact: `arbitrary_precision`), else nothing.
fn text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

impl Unreadable {
    pub fn read(body: &[u8]) -> Self {
        let value: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
        let data = &value["data"];
        let id = text(&value["id"])
            .filter(|id| !id.is_empty())
            .unwrap_or_else(|| format!("unreadable:{}", hex::encode(Sha256::digest(body))));
        Self {
            id,
            kind: value["type"].as_str().unwrap_or_default().to_owned(),
            reference: text(&data["reference"])
                .map(|r| super::canonical_reference(&r))
                .unwrap_or_default(),
            payment_id: text(&data["payment_id"]),
            amount_minor: data["amount_minor"].as_i64(),
            currency: data["currency"].as_str().map(str::to_owned),
        }
    }

    /// Anything but a decline may have taken money: a capture, or a type we cannot tell.
    fn may_be_capture(&self) -> bool {
        self.kind != "payment_declined"
    }
}

/// What recording an unreadable event did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recorded {
    /// Recorded and listed for refund.
    Listed,
    /// Recorded; its payment was already credited or listed, so it is no second charge.
    PaymentDecided,
    /// Recorded; a decline takes no money.
    Decline,
    /// These bytes (this event id) were recorded before: nothing new.
    Repeated,
}

/// Records `body` (already known to be signed and unreadable as an event), logs and counts it.
pub async fn record(conn: &mut AsyncPgConnection, body: &[u8]) -> Result<Recorded, PointError> {
    let mut event = Unreadable::read(body);
    // Recorded under the id a readable event of the webhook would have.
    event.id = super::Source::Webhook.recorded_id(&event.id).into_owned();
    let recorded = conn
        .transaction::<_, PointError, _>(async |conn| {
            let payment_id = event.payment_id.as_deref();
            attempts::lock_payment(conn, payment_id).await?;
            let record = EventRecord {
                id: &event.id,
                kind: &event.kind,
                reference: &event.reference,
                payment_id,
                amount_minor: event.amount_minor,
                currency: event.currency.as_deref(),
                outcome: "unreadable",
                body: None,
            };
            if !record.insert_new(conn).await? {
                return Ok(Recorded::Repeated);
            }
            if !event.may_be_capture() {
                return Ok(Recorded::Decline);
            }
            if !attempts::decided_captures(conn, payment_id, &event.id)
                .await?
                .is_empty()
            {
                return Ok(Recorded::PaymentDecided);
            }
            // The order, locked as the webhook locks it, then its clients' accounts: the
            // listing writes an event for the payer (`capture.unapplied`), and a client's
            // events keep commit order only when every writer holds the client's lock.
            let order = match event.reference.parse::<Uuid>() {
                Ok(id) => point_orders::table
                    .find(id)
                    .select((
                        point_orders::correlation_id,
                        point_orders::payer_id,
                        point_orders::recipient_id,
                    ))
                    .for_update()
                    .first::<(Uuid, i64, i64)>(conn)
                    .await
                    .optional()?,
                Err(_) => None,
            };
            if let Some((_, payer, recipient)) = order {
                ledger::lock_accounts(conn, &[recipient, payer]).await?;
            }
            let order = order.map(|(id, _, _)| id);
            let listing = Listing {
                event_id: &event.id,
                reference: &event.reference,
                order,
                payment_id,
                amount_minor: event.amount_minor,
                currency: event.currency.as_deref(),
                reason: Unapplied::Unreadable,
            };
            Ok(if unapplied::record(conn, &listing).await? {
                Recorded::Listed
            } else {
                Recorded::PaymentDecided
            })
        })
        .await?;
    report(&event, recorded);
    Ok(recorded)
}

fn report(event: &Unreadable, recorded: Recorded) {
    let payment_id = event.payment_id.as_deref().unwrap_or("");
    if recorded != Recorded::Repeated {
        metrics::counter!(super::EVENTS, "outcome" => "unreadable").increment(1);
    }
    match recorded {
        Recorded::Listed => {
            let reason = Unapplied::Unreadable.as_str();
            metrics::counter!(super::UNAPPLIED_CAPTURES, "reason" => reason).increment(1);
            tracing::error!(
                event.id = %event.id, event.type = %event.kind, order.id = %event.reference,
                payment.id = payment_id, amount_minor = ?event.amount_minor,
                "signed payment event unreadable: it may be a capture (money taken without \
                 points); listed for refund (point-service unapplied-captures)"
            );
        }
        Recorded::PaymentDecided | Recorded::Decline => tracing::error!(
            event.id = %event.id, event.type = %event.kind, order.id = %event.reference,
            payment.id = payment_id,
            "signed payment event unreadable: recorded; its payment takes no new money"
        ),
        Recorded::Repeated => tracing::warn!(
            event.id = %event.id,
            "signed payment event unreadable, delivered again: recorded before"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_read_as_far_as_they_go() {
        let read = Unreadable::read(
            br#"{"id": 42, "type": "payment_captured", "data": {
                "reference": "{0E3B8F5A-6C4D-4E2F-9A1B-2C3D4E5F6A7B}",
                "payment_id": 12345678901234567890123, "amount_minor": 1500.0, "currency": "SAR"}}"#,
        );
        assert_eq!(
            read,
            Unreadable {
                id: "42".into(),
                kind: "payment_captured".into(),
                reference: "0e3b8f5a-6c4d-4e2f-9a1b-2c3d4e5f6a7b".into(),
                payment_id: Some("12345678901234567890123".into()),
                amount_minor: None,
                currency: Some("SAR".into()),
            }
        );
        assert_eq!(
            Unreadable::read(br#"{"data": {"amount_minor": "1500"}}"#).amount_minor,
            None
        );
        assert_eq!(
            Unreadable::read(br#"{"data": {"amount_minor": 1500}}"#).amount_minor,
            Some(1500)
        );
    }

    #[test]
    fn a_body_without_an_id_is_known_by_its_hash() {
        let a = Unreadable::read(b"not json");
        assert_eq!(a, Unreadable::read(b"not json"));
        assert!(a.id.starts_with("unreadable:"));
        assert_ne!(a.id, Unreadable::read(b"not json!").id);
        assert_eq!(a.kind, "");
        assert!(a.may_be_capture());
        assert!(!Unreadable::read(br#"{"type": "payment_declined"}"#).may_be_capture());
    }
}
