//! The payment webhook (no HTTP in here): the signature, and what a capture or decline does.
//!
//! `X-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`; a timestamp
//! more than 300 s from our clock is refused so a captured request cannot be replayed
//! later. Events are idempotent by id. What a capture or decline does to the order is the
//! state machine's decision ([`crate::payment_state`]), taken under the order's row lock. A
//! capture that is not applied (order already final, unknown order, another amount or
//! currency) took money without giving points: it is recorded in `unapplied_captures`,
//! logged at error level and counted in `payment_captures_unapplied_total{reason}`.
//!
//! The payment sync ([`crate::payment_sync`]) applies what it reads back through [`apply`]
//! too, as an event of its own: the same rules, once per payment, whichever comes first. A
//! signed event of a type this service does not know is recorded with its body, logged at
//! error level, counted, and its order synced at once: it may say the money was taken.

pub mod unreadable;

use std::time::Duration;

use diesel::prelude::*;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use hmac::{Hmac, KeyInit, Mac};
use serde::Deserialize;
use sha2::Sha256;
use uuid::Uuid;

use crate::attempts;
use crate::db::schema::{payment_events, point_orders};
use crate::error::PointError;
use crate::ledger::{self, Entry, Kind};
use crate::orders::OrderRow;
use crate::payment_state::{Amount, Decision, Input, Unapplied};
use crate::payment_sync;
use crate::unapplied::{self, Listing};

pub const TOLERANCE_SECONDS: u64 = 300;

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
/// [`WEBHOOK_PREFIX`].
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

/// Why a delivery's `X-Signature` was refused: the label of
/// `payment_webhook_signature_failures_total{reason}`, which tells an on-call engineer a clock
/// (stale) from a secret (mismatch) from a sender that is not the payment service (missing,
/// malformed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignatureRefused {
    Missing,
    Malformed,
    Stale,
    Mismatch,
}

impl SignatureRefused {
    pub const ALL: [SignatureRefused; 4] = [
        SignatureRefused::Missing,
        SignatureRefused::Malformed,
        SignatureRefused::Stale,
        SignatureRefused::Mismatch,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            SignatureRefused::Missing => "missing",
            SignatureRefused::Malformed => "malformed",
            SignatureRefused::Stale => "stale",
            SignatureRefused::Mismatch => "mismatch",
        }
    }

    /// Counts one refused delivery.
    pub fn count(self) {
        metrics::counter!(SIGNATURE_FAILURES, "reason" => self.as_str()).increment(1);
    }
}

/// Deliveries refused for their signature, by [`SignatureRefused`] reason.
pub const SIGNATURE_FAILURES: &str = "payment_webhook_signature_failures_total";

/// Money counters at zero from the start (`telemetry::metrics::counters_at_zero` says why):
/// captures not applied, by reason, refused signatures, by reason, and events of an unknown
/// type.
pub fn export_counters() {
    let unapplied = Unapplied::ALL.map(Unapplied::as_str);
    telemetry::metrics::counters_at_zero(UNAPPLIED_CAPTURES, "reason", &unapplied);
    let refused = SignatureRefused::ALL.map(SignatureRefused::as_str);
    telemetry::metrics::counters_at_zero(SIGNATURE_FAILURES, "reason", &refused);
    // The outcome an alert watches: a type the service does not know.
    telemetry::metrics::counters_at_zero(EVENTS, "outcome", &[Outcome::UnknownType.as_str()]);
}

/// Captures that took money without points, by [`Unapplied`] reason.
pub const UNAPPLIED_CAPTURES: &str = "payment_captures_unapplied_total";

/// Webhook events, by [`Outcome`].
pub const EVENTS: &str = "payment_webhook_events_total";

/// Checks `X-Signature` against the raw body in constant time.
pub fn verify_signature(
    secret: &[u8],
    header: Option<&str>,
    body: &[u8],
    now: i64,
) -> Result<(), SignatureRefused> {
    let header = header.ok_or(SignatureRefused::Missing)?;
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
        return Err(SignatureRefused::Malformed);
    };
    // The signature first, the age second: `t` is only the gateway's once the signature
    // over it holds, so `stale` counts the gateway's late deliveries alone and anyone else's
    // attempt is a `mismatch` (the alerts and the runbook tell the two apart).
    let Ok(mut mac) = <Hmac<Sha256> as KeyInit>::new_from_slice(secret) else {
        return Err(SignatureRefused::Mismatch);
    };
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    mac.verify_slice(&signature)
        .map_err(|_| SignatureRefused::Mismatch)?;
    // `(now - t).abs()` overflows for t = i64::MIN and others.
    if now.abs_diff(timestamp) > TOLERANCE_SECONDS {
        return Err(SignatureRefused::Stale);
    }
    Ok(())
}

/// A delivery as `payment_events` keeps it: a readable event (`pending` until decided) or
/// an unreadable one (`unreadable`, see [`unreadable`]).
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
    /// The caller holds the payment's lock ([`attempts::lock_payment`]).
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

/// What an event did; stored with it and answered to the sender.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Captured,
    Declined,
    /// A decline of an attempt a newer one supersedes; the order stays payable.
    Superseded,
    Duplicate,
    /// Another event for a payment whose capture was already decided: no second charge.
    DuplicateCapture,
    /// Money taken without points: listed in `unapplied_captures` for refund.
    Unapplied(Unapplied),
    /// A decline of an order that is no longer payable.
    NotPending,
    /// A decline naming no order.
    UnknownOrder,
    UnknownType,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Captured => "captured",
            Outcome::Declined => "declined",
            Outcome::Superseded => "superseded",
            Outcome::Duplicate => "duplicate_event",
            Outcome::DuplicateCapture => "duplicate_capture",
            Outcome::Unapplied(reason) => reason.as_str(),
            Outcome::NotPending => "not_pending",
            Outcome::UnknownOrder => "unknown_order",
            Outcome::UnknownType => "unknown_type",
        }
    }
}

/// The reference as it is recorded: a UUID in its canonical text (lower-case hyphenated),
/// however the sender spelled it (upper case, braces, the 32-hex form), so that every
/// event of an order is found under one text; anything else as sent.
pub fn canonical_reference(reference: &str) -> String {
    reference
        .parse::<Uuid>()
        .map_or_else(|_| reference.to_owned(), |id| id.to_string())
}

/// Applies an event in one transaction: the event row, the order's move, the credit, the
/// unapplied capture's record. `body` is the raw delivery (a webhook's), kept when the type
/// is unknown. `window` is how long a pay call's attempt counts as in flight. A decline that
/// must wait for a pay call's answer is `PointError::RetryLater` and leaves nothing behind,
/// so the sender's next delivery is decided afresh.
pub async fn apply(
    conn: &mut AsyncPgConnection,
    event: &Event,
    body: Option<&[u8]>,
    window: Duration,
    source: Source,
) -> Result<Outcome, PointError> {
    let reference = canonical_reference(&event.data.reference);
    let payment_id = event.data.payment_id.as_deref();
    let id = source.recorded_id(&event.id);
    let id = id.as_ref();
    let known = event.kind == CAPTURED || event.kind == DECLINED;
    let body = body
        .filter(|_| !known)
        .map(|b| String::from_utf8_lossy(b).into_owned());
    let outcome = conn
        .transaction::<_, PointError, _>(async |conn| {
            attempts::lock_payment(conn, payment_id).await?;
            let record = EventRecord {
                id,
                kind: &event.kind,
                reference: &reference,
                payment_id,
                amount_minor: event.data.amount_minor,
                currency: event.data.currency.as_deref(),
                outcome: "pending",
                body: body.as_deref(),
            };
            if !record.insert_new(conn).await? {
                return Ok(Outcome::Duplicate);
            }
            let (mut outcome, order) = decide(conn, event, id, window).await?;
            if outcome == Outcome::UnknownType
                && let Ok(correlation_id) = reference.parse::<Uuid>()
            {
                payment_sync::schedule_now(conn, correlation_id).await?;
            }
            if let Outcome::Unapplied(reason) = outcome {
                let listing = Listing {
                    event_id: id,
                    reference: &reference,
                    order,
                    payment_id,
                    amount_minor: event.data.amount_minor,
                    currency: event.data.currency.as_deref(),
                    reason,
                };
                if !unapplied::record(conn, &listing).await? {
                    // The payment is already listed (its capture came again under another id).
                    outcome = Outcome::DuplicateCapture;
                }
            }
            diesel::update(payment_events::table.find(id))
                .set(payment_events::outcome.eq(outcome.as_str()))
                .execute(conn)
                .await?;
            Ok(outcome)
        })
        .await?;
    report(event, outcome, source);
    Ok(outcome)
}

/// What the event does, and the order it names when that order exists.
/// `event_id` is the event's id as recorded ([`Source::recorded_id`]).
async fn decide(
    conn: &mut AsyncPgConnection,
    event: &Event,
    event_id: &str,
    window: Duration,
) -> Result<(Outcome, Option<Uuid>), PointError> {
    let is_capture = match event.kind.as_str() {
        CAPTURED => true,
        DECLINED => false,
        _ => return Ok((Outcome::UnknownType, None)),
    };
    let payment_id = event.data.payment_id.as_deref();
    // A capture of a payment already decided is no second charge, whatever order its
    // reference names (or fails to name).
    let captured = if is_capture {
        attempts::decided_captures(conn, payment_id, event_id).await?
    } else {
        Vec::new()
    };
    let unknown_order = if !is_capture {
        Outcome::UnknownOrder
    } else if captured.is_empty() {
        Outcome::Unapplied(Unapplied::UnknownOrder)
    } else {
        Outcome::DuplicateCapture
    };
    let Ok(correlation_id) = event.data.reference.parse::<Uuid>() else {
        return Ok((unknown_order, None));
    };
    let Some(status) = attempts::lock_status(conn, correlation_id).await? else {
        return Ok((unknown_order, None));
    };
    let order: OrderRow = point_orders::table
        .find(correlation_id)
        .select(OrderRow::as_select())
        .first(conn)
        .await?;
    if is_capture
        && captured.is_empty()
        && let Some(owner) = attempts::answered_elsewhere(conn, payment_id, correlation_id).await?
    {
        tracing::error!(
            order.id = %correlation_id, payment.id = payment_id.unwrap_or(""), payment.order = %owner,
            "capture names an order whose payment it is not: another order's pay call was answered with it"
        );
        return Ok((
            Outcome::Unapplied(Unapplied::OtherOrder),
            Some(correlation_id),
        ));
    }
    let payment = attempts::load(conn, correlation_id, status, window, captured).await?;
    let input = if is_capture {
        Input::Captured {
            payment_id,
            amount: compare(&order, &event.data),
        }
    } else {
        Input::Declined { payment_id }
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
    let outcome = match payment.step(&input).1 {
        Decision::Credit => {
            move_to("successful", "CAPTURED").execute(conn).await?;
            payment_sync::done(conn, correlation_id).await?;
            let mut recipient = ledger::lock_account(conn, order.recipient_id).await?;
            let kind = if order.recipient_id == order.payer_id {
                Kind::Purchase
            } else {
                Kind::GiftReceived
            };
            ledger::append(
                conn,
                &mut recipient,
                Entry {
                    kind,
                    points: order.point_amount.clone(),
                    order: Some(correlation_id),
                    reference: None,
                    at: None,
                },
            )
            .await?;
            Outcome::Captured
        }
        Decision::Fail => {
            move_to("payment_failed", "FAILED").execute(conn).await?;
            payment_sync::done(conn, correlation_id).await?;
            Outcome::Declined
        }
        Decision::Superseded => Outcome::Superseded,
        Decision::RetryLater => {
            return Err(PointError::RetryLater(
                "the payment's attempt is not recorded yet; deliver the event again",
            ));
        }
        Decision::NotPending => Outcome::NotPending,
        Decision::DuplicateCapture => Outcome::DuplicateCapture,
        Decision::Unapplied(reason) => Outcome::Unapplied(reason),
        other @ (Decision::Pay | Decision::NotPayable(_) | Decision::Record) => {
            return Err(PointError::Internal(format!(
                "a payment event decided {other:?}"
            )));
        }
    };
    Ok((outcome, Some(correlation_id)))
}

/// The capture's money against the order's: amount in halalas, then currency.
fn compare(order: &OrderRow, data: &EventData) -> Amount {
    // `None` when the price is not a whole number of halalas: no capture can match it.
    let expected = crate::numbers::amount_minor(&order.money_amount);
    if expected.is_none() || data.amount_minor != expected {
        Amount::OtherAmount
    } else if data.currency.as_deref() != Some("SAR") {
        Amount::OtherCurrency
    } else {
        Amount::Matches
    }
}

/// One log line per event; money taken without points at error level, counted by reason.
/// A webhook's event is counted in `payment_webhook_events_total{outcome}`, a payment the
/// sync read back in `payment_sync_applied_total{outcome}`.
fn report(event: &Event, outcome: Outcome, source: Source) {
    let counter = match source {
        Source::Webhook => EVENTS,
        Source::Sync => payment_sync::APPLIED,
    };
    metrics::counter!(counter, "outcome" => outcome.as_str()).increment(1);
    let reference = event.data.reference.as_str();
    let payment_id = event.data.payment_id.as_deref().unwrap_or("");
    match outcome {
        Outcome::Unapplied(reason) => {
            metrics::counter!(UNAPPLIED_CAPTURES, "reason" => reason.as_str()).increment(1);
            tracing::error!(
                event.id = %event.id, order.id = reference, payment.id = payment_id,
                reason = reason.as_str(), amount_minor = ?event.data.amount_minor,
                currency = ?event.data.currency,
                "payment captured but not applied: money taken without points; refund it (point-service unapplied-captures)"
            )
        }
        Outcome::UnknownType => {
            tracing::error!(
                event.id = %event.id, event.type = %event.kind, order.id = reference,
                payment.id = payment_id,
                "signed payment event of an unknown type: recorded with its body, its order synced with the payment service now; does the payment service send a new type?"
            )
        }
        Outcome::DuplicateCapture | Outcome::NotPending | Outcome::UnknownOrder => {
            tracing::warn!(event.id = %event.id, order.id = reference, payment.id = payment_id, outcome = outcome.as_str(), "payment event recorded, nothing applied")
        }
        _ => {
            tracing::info!(event.id = %event.id, order.id = reference, payment.id = payment_id, outcome = outcome.as_str(), "payment event applied")
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
        assert_eq!(verify_signature(b"s", Some(&header), b"{}", 1000), Ok(()));
        assert_eq!(verify_signature(b"s", Some(&header), b"{}", 1300), Ok(()));
        assert_eq!(
            verify_signature(b"s", Some(&header), b"{}", 700),
            Ok(()),
            "300 s ahead of our clock"
        );
    }

    #[test]
    fn stale_forged_or_missing_signatures_fail_each_with_its_reason() {
        use SignatureRefused::*;
        let header = sign(b"s", 1000, b"{}");
        let refused = |secret: &[u8], header: Option<&str>, body: &[u8], now| {
            verify_signature(secret, header, body, now).unwrap_err()
        };
        assert_eq!(refused(b"s", Some(&header), b"{}", 1301), Stale);
        assert_eq!(
            refused(b"s", Some(&header), b"{}", 699),
            Stale,
            "301 s ahead"
        );
        assert_eq!(
            refused(b"s", Some(&header), b"{} ", 1000),
            Mismatch,
            "body changed"
        );
        assert_eq!(
            refused(b"other", Some(&header), b"{}", 1000),
            Mismatch,
            "other secret"
        );
        assert_eq!(
            refused(b"other", Some(&header), b"{}", 1301),
            Mismatch,
            "an old timestamp under another secret is anyone's, not the gateway's late delivery"
        );
        assert_eq!(refused(b"s", None, b"{}", 1000), Missing);
        assert_eq!(refused(b"s", Some("t=1000"), b"{}", 1000), Malformed);
        assert_eq!(refused(b"s", Some("garbage"), b"{}", 1000), Malformed);
    }

    #[test]
    fn extreme_timestamps_fail_without_overflow() {
        for t in [i64::MIN, i64::MIN + 1, -1, i64::MAX] {
            let header = sign(b"s", t, b"{}");
            for now in [i64::MIN, -1, 0, 1_700_000_000, i64::MAX] {
                assert_eq!(
                    verify_signature(b"s", Some(&header), b"{}", now).is_ok(),
                    now.abs_diff(t) <= TOLERANCE_SECONDS,
                    "t={t} now={now}"
                );
            }
        }
    }
}
