//! The payment webhook (no HTTP in here): what a capture or decline does, the delivery's
//! signature ([`signature`]), the event and its record ([`event`]), and a signed body that is
//! no event ([`unreadable`]).
//!
//! Events are idempotent by id. What a capture or decline does to the order is the state
//! machine's decision ([`crate::payments::machine`]), taken under the order's row lock. A
//! capture that is not applied (order already final, unknown order, another amount or
//! currency) took money without giving points: it is recorded in `unapplied_captures`,
//! logged at error level and counted in `payment_captures_unapplied_total{reason}`.
//!
//! The payment sync ([`crate::payments::sync`]) applies what it reads back through [`apply`]
//! too, as an event of its own: the same rules, once per payment, whichever comes first. A
//! signed event of a type this service does not know is recorded with its body, logged at
//! error level, counted, and its order synced at once: it may say the money was taken.

pub mod event;
pub mod signature;
pub mod unreadable;

use std::time::Duration;

use diesel::prelude::*;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use uuid::Uuid;

use self::event::{CAPTURED, DECLINED, Event, EventData, EventRecord, Source, canonical_reference};
use crate::db::schema::{payment_events, point_orders};
use crate::error::PointError;
use crate::ledger::{self, Entry, Kind};
use crate::orders::OrderRow;
use crate::orders::{PaymentStatus, Status};
use crate::payments::attempts;
use crate::payments::machine::{Amount, Decision, Input, Unapplied};
use crate::payments::sync;
use crate::payments::unapplied::{self, Listing};

envelope::refusals! {
    /// Why the webhook refuses a delivery.
    pub enum WebhookRefusal in B {
        /// `X-Signature` missing, malformed, stale or not ours (a [`signature::Fault`]):
        /// nothing changes.
        BadSignature => 401, "invalid signature";
        /// Signed, but not an [`Event`]: recorded first ([`unreadable::record`]), since it may
        /// be a capture.
        UnreadableEvent(why: String) => 400, "invalid event: {why}";
    }
}

/// The 503 of a decline that depends on a pay call whose answer is not recorded yet
/// ([`Decision::RetryLater`]): nothing is recorded, and the sender's next delivery is
/// decided afresh.
pub const ATTEMPT_NOT_RECORDED: &str =
    "the payment's attempt is not recorded yet; deliver the event again";

/// Money counters at zero from the start (`telemetry::metrics::counters_at_zero` says why):
/// captures not applied, by reason, refused signatures, by reason, and events of an unknown
/// type.
pub fn export_counters() {
    let unapplied = Unapplied::ALL.map(Unapplied::as_str);
    telemetry::metrics::counters_at_zero(UNAPPLIED_CAPTURES, "reason", &unapplied);
    let refused = signature::Fault::ALL.map(signature::Fault::as_str);
    telemetry::metrics::counters_at_zero(signature::SIGNATURE_FAILURES, "reason", &refused);
    // The outcome an alert watches: a type the service does not know.
    telemetry::metrics::counters_at_zero(EVENTS, "outcome", &[Outcome::UnknownType.as_str()]);
}

/// Captures that took money without points, by [`Unapplied`] reason.
pub const UNAPPLIED_CAPTURES: &str = "payment_captures_unapplied_total";

/// Webhook events, by [`Outcome`].
pub const EVENTS: &str = "payment_webhook_events_total";

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
    /// Every outcome but the unapplied captures' ([`Unapplied::ALL`]).
    const APPLIED: [Outcome; 8] = [
        Outcome::Captured,
        Outcome::Declined,
        Outcome::Superseded,
        Outcome::Duplicate,
        Outcome::DuplicateCapture,
        Outcome::NotPending,
        Outcome::UnknownOrder,
        Outcome::UnknownType,
    ];

    /// Every name an outcome is answered by, each once (`unknown_order` is both a decline's
    /// and an unapplied capture's).
    pub fn names() -> Vec<&'static str> {
        let mut names: Vec<&str> = Self::APPLIED.map(Self::as_str).to_vec();
        for reason in Unapplied::ALL {
            if !names.contains(&reason.as_str()) {
                names.push(reason.as_str());
            }
        }
        names
    }

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
                sync::queue::schedule_now(conn, correlation_id).await?;
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
    // Both clients' accounts, before anything is written: what follows may write an event for
    // the payer (the order's outcome, a capture listed for refund) and a ledger entry for the
    // recipient, and a client's events take their ids in commit order only when every writer
    // holds the client's lock (`ledger::lock_accounts`, in id order, as every writer takes them).
    let mut accounts = ledger::lock_accounts(conn, &[order.recipient_id, order.payer_id]).await?;
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
    let move_to = |status: Status, payment_status: PaymentStatus| {
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
            move_to(Status::Successful, PaymentStatus::Captured)
                .execute(conn)
                .await?;
            sync::queue::done(conn, correlation_id).await?;
            let recipient = &mut accounts[0];
            let kind = if order.recipient_id == order.payer_id {
                Kind::Purchase
            } else {
                Kind::GiftReceived
            };
            ledger::append(
                conn,
                recipient,
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
            move_to(Status::PaymentFailed, PaymentStatus::Failed)
                .execute(conn)
                .await?;
            sync::queue::done(conn, correlation_id).await?;
            Outcome::Declined
        }
        Decision::Superseded => Outcome::Superseded,
        Decision::RetryLater => {
            return Err(PointError::RetryLater(ATTEMPT_NOT_RECORDED));
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
        Source::Sync => sync::APPLIED,
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
                "payment captured but not applied: money taken without points; refund it \
                 (point-service unapplied-captures)"
            )
        }
        Outcome::UnknownType => {
            tracing::error!(
                event.id = %event.id, event.type = %event.kind, order.id = reference,
                payment.id = payment_id,
                "signed payment event of an unknown type: recorded with its body, its order \
                 synced with the payment service now; does the payment service send a new type?"
            )
        }
        Outcome::DuplicateCapture | Outcome::NotPending | Outcome::UnknownOrder => {
            tracing::warn!(
                event.id = %event.id, order.id = reference, payment.id = payment_id,
                outcome = outcome.as_str(), "payment event recorded, nothing applied"
            )
        }
        _ => {
            tracing::info!(
                event.id = %event.id, order.id = reference, payment.id = payment_id,
                outcome = outcome.as_str(), "payment event applied"
            )
        }
    }
}
