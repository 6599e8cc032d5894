//! The payment webhook (no HTTP in here): the signature, and what a capture or decline does.
//!
//! `X-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`; a timestamp
//! more than 300 s from our clock is refused so a captured request cannot be replayed
//! later. Events are idempotent by id. A capture of an order already `successful` is
//! recorded and alerted (error log, metric) and never credited twice; a capture whose amount
//! does not match the order is not applied.

use diesel::prelude::*;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use hmac::{Hmac, KeyInit, Mac};
use serde::Deserialize;
use sha2::Sha256;
use uuid::Uuid;

use crate::db::schema::{payment_events, point_orders};
use crate::error::PointError;
use crate::ledger::{self, Entry, Kind};
use crate::orders::OrderRow;

pub const TOLERANCE_SECONDS: i64 = 300;

/// Checks `X-Signature` against the raw body in constant time.
pub fn verify_signature(secret: &[u8], header: Option<&str>, body: &[u8], now: i64) -> bool {
    let Some(header) = header else { return false };
    let mut timestamp = None;
    let mut signature = None;
    for part in header.split(',') {
        match part.trim().split_once('=') {
            Some(("t", t)) => timestamp = t.parse::<i64>().ok(),
            Some(("v1", v)) => signature = hex::decode(v).ok(),
            _ => {}
        }
    }
    let (Some(timestamp), Some(signature)) = (timestamp, signature) else {
        return false;
    };
    if (now - timestamp).abs() > TOLERANCE_SECONDS {
        return false;
    }
    let Ok(mut mac) = <Hmac<Sha256> as KeyInit>::new_from_slice(secret) else {
        return false;
    };
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    mac.verify_slice(&signature).is_ok()
}

#[derive(Debug, Deserialize)]
pub struct Event {
    pub id: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub data: EventData,
}

#[derive(Debug, Deserialize)]
pub struct EventData {
    pub reference: String,
    pub payment_id: Option<String>,
    pub provider: Option<String>,
    pub amount_minor: Option<i64>,
    pub currency: Option<String>,
}

/// What an event did; stored with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Captured,
    Declined,
    Duplicate,
    DuplicateCapture,
    AmountMismatch,
    NotPending,
    UnknownOrder,
    UnknownType,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Captured => "captured",
            Outcome::Declined => "declined",
            Outcome::Duplicate => "duplicate_event",
            Outcome::DuplicateCapture => "duplicate_capture",
            Outcome::AmountMismatch => "amount_mismatch",
            Outcome::NotPending => "not_pending",
            Outcome::UnknownOrder => "unknown_order",
            Outcome::UnknownType => "unknown_type",
        }
    }
}

/// Applies an event in one transaction: the event row, the order's move and the credit.
pub async fn apply(conn: &mut AsyncPgConnection, event: &Event) -> Result<Outcome, PointError> {
    let outcome = conn
        .transaction::<_, PointError, _>(async |conn| {
            let inserted = diesel::insert_into(payment_events::table)
                .values((
                    payment_events::id.eq(&event.id),
                    payment_events::kind.eq(&event.kind),
                    payment_events::reference.eq(&event.data.reference),
                    payment_events::payment_id.eq(&event.data.payment_id),
                    payment_events::amount_minor.eq(event.data.amount_minor),
                    payment_events::currency.eq(&event.data.currency),
                    payment_events::outcome.eq("pending"),
                ))
                .on_conflict_do_nothing()
                .execute(conn)
                .await?;
            if inserted == 0 {
                return Ok(Outcome::Duplicate);
            }
            let outcome = decide(conn, event).await?;
            diesel::update(payment_events::table.find(&event.id))
                .set(payment_events::outcome.eq(outcome.as_str()))
                .execute(conn)
                .await?;
            Ok(outcome)
        })
        .await?;
    report(event, outcome);
    Ok(outcome)
}

async fn decide(conn: &mut AsyncPgConnection, event: &Event) -> Result<Outcome, PointError> {
    let Ok(correlation_id) = event.data.reference.parse::<Uuid>() else {
        return Ok(Outcome::UnknownOrder);
    };
    let order: Option<OrderRow> = point_orders::table
        .find(correlation_id)
        .select(OrderRow::as_select())
        .for_update()
        .first(conn)
        .await
        .optional()?;
    let Some(order) = order else {
        return Ok(Outcome::UnknownOrder);
    };
    let move_to = |status: &'static str, payment_status: &'static str| {
        diesel::update(point_orders::table.find(correlation_id)).set((
            point_orders::status.eq(status),
            point_orders::payment_status.eq(payment_status),
            point_orders::payment_provider.eq(event.data.provider.clone()),
            point_orders::payment_reference.eq(event.data.payment_id.clone()),
            point_orders::updated_at.eq(diesel::dsl::now),
        ))
    };
    match (event.kind.as_str(), order.status.as_str()) {
        ("payment_captured", "successful") => Ok(Outcome::DuplicateCapture),
        ("payment_captured", "initial_order") => {
            let expected = crate::numbers::amount_minor(&order.money_amount);
            let currency_ok = event.data.currency.as_deref().is_none_or(|c| c == "SAR");
            if event.data.amount_minor != expected || !currency_ok {
                return Ok(Outcome::AmountMismatch);
            }
            move_to("successful", "CAPTURED").execute(conn).await?;
            ledger::lock_accounts(conn, &[order.recipient_id]).await?;
            let kind = if order.recipient_id == order.payer_id {
                Kind::Purchase
            } else {
                Kind::GiftReceived
            };
            ledger::append(
                conn,
                Entry {
                    client_id: order.recipient_id,
                    kind,
                    points: order.point_amount.clone(),
                    order: Some(correlation_id),
                    reference: None,
                },
            )
            .await?;
            Ok(Outcome::Captured)
        }
        ("payment_declined", "initial_order") => {
            move_to("payment_failed", "FAILED").execute(conn).await?;
            Ok(Outcome::Declined)
        }
        ("payment_captured" | "payment_declined", _) => Ok(Outcome::NotPending),
        _ => Ok(Outcome::UnknownType),
    }
}

/// One log line per event; the ones an operator must act on at error level, counted.
fn report(event: &Event, outcome: Outcome) {
    metrics::counter!("payment_webhook_events_total", "outcome" => outcome.as_str()).increment(1);
    let reference = event.data.reference.as_str();
    match outcome {
        Outcome::DuplicateCapture | Outcome::AmountMismatch => tracing::error!(
            event.id = %event.id, order.id = reference, outcome = outcome.as_str(),
            amount_minor = ?event.data.amount_minor,
            "payment capture not applied: refund or reconcile by hand"
        ),
        Outcome::NotPending | Outcome::UnknownOrder | Outcome::UnknownType => {
            tracing::warn!(event.id = %event.id, order.id = reference, outcome = outcome.as_str(), "payment event ignored")
        }
        _ => {
            tracing::info!(event.id = %event.id, order.id = reference, outcome = outcome.as_str(), "payment event applied")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sign(secret: &[u8], t: i64, body: &[u8]) -> String {
        let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(secret).unwrap();
        mac.update(format!("{t}.").as_bytes());
        mac.update(body);
        format!("t={t},v1={}", hex::encode(mac.finalize().into_bytes()))
    }

    #[test]
    fn a_fresh_signature_over_the_raw_body_passes() {
        let header = sign(b"s", 1000, b"{}");
        assert!(verify_signature(b"s", Some(&header), b"{}", 1000));
        assert!(verify_signature(b"s", Some(&header), b"{}", 1300));
    }

    #[test]
    fn stale_forged_or_missing_signatures_fail() {
        let header = sign(b"s", 1000, b"{}");
        assert!(!verify_signature(b"s", Some(&header), b"{}", 1301), "stale");
        assert!(
            !verify_signature(b"s", Some(&header), b"{} ", 1000),
            "body changed"
        );
        assert!(
            !verify_signature(b"other", Some(&header), b"{}", 1000),
            "other secret"
        );
        assert!(!verify_signature(b"s", None, b"{}", 1000));
        assert!(!verify_signature(b"s", Some("t=1000"), b"{}", 1000));
        assert!(!verify_signature(b"s", Some("garbage"), b"{}", 1000));
    }
}
