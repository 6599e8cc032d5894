//! Payment sync (docs/design.md, "Payment service"): the payment service is the source of
//! truth for what was taken, and its webhook only the fast path. A webhook can be lost for
//! good, and a pay call's answer can be lost on the way back, so an order still
//! `initial_order` whose latest pay attempt is older than `PAYMENT_SYNC_AFTER_SECONDS` has
//! its payments read back (by id; by reference when a pay call's answer was lost) and a
//! captured or declined one applied through [`webhook::apply`], exactly as its webhook
//! would be: the same rules, once per payment, whichever comes first.
//!
//! - An order is scheduled by each pay attempt (`payment_syncs`, written in the attempt's
//!   transaction) and at once by a signed event of a type the service does not know; its
//!   row goes when the order becomes final.
//! - Taking an order pushes its due time forward by a lease's length, so a worker that dies
//!   between reading and applying leaves it due again; applying twice is harmless (a read
//!   back payment is the event `sync:<status>:<payment id>`, idempotent like any event,
//!   and a capture of a payment already decided is never a second credit).
//! - A read that fails (the payment service down or slow), a payment still pending, or a
//!   pay call whose answer was lost and whose payment has not turned up yet (the payment
//!   service may commit it after our first read: finding nothing is not final) leaves the
//!   order open and tries it again later, doubling the wait each time up to
//!   [`MAX_BACKOFF`](queue::MAX_BACKOFF); past the horizon (`PAYMENT_SYNC_HORIZON_DAYS`) it
//!   is listed for a person instead (`point-service unsynced-orders`), logged at error level
//!   and counted.
//! - A read-back that names another order's reference, or another payment than the one
//!   asked for, is not applied: it is logged at error level and counted in
//!   `payment_sync_anomalies_total{kind}`, and the order is tried again later.
//! - Two reads of one payment that disagree on status, amount or currency (by id and by
//!   reference in one pass, or this pass and an earlier one's final reading, kept in
//!   [`earlier`]) decide nothing: nothing of the order is applied, the order is read again
//!   after the backoff, and at the [`DISAGREEMENTS_LISTED`]th such pass it is listed for a
//!   person with both readings (`payment_sync_anomalies_total{kind="disagreement"}`).
//!
//! No connection is held while the payment service is asked: the order's attempts are read
//! and the connection returned first, and each apply takes a new one.

pub mod earlier;
pub mod gauges;
pub mod listed;
pub mod queue;
pub mod read;
pub mod reading;
pub mod task;

use std::time::Duration;

use uuid::Uuid;

use self::queue::{Taken, disagreed, finished, undecided};
use self::read::{plan, read, still_open};
use self::reading::Reading;
use crate::config::SyncSettings;
use crate::error::PointError;
use crate::payments::client::{self, PaymentClient, ReadPayment, ReadStatus};
use crate::payments::webhook::event::{CAPTURED, DECLINED, Event, EventData, SYNC_PREFIX, Source};
use crate::payments::webhook::{self, Outcome};

/// Orders listed for a person past the horizon.
pub const LISTED: &str = "payment_sync_orders_listed_total";
/// Read-backs not applied because they contradict what was asked, by kind.
pub const ANOMALIES: &str = "payment_sync_anomalies_total";
/// Read-back payments applied, by the outcome the webhook's rules gave them.
pub const APPLIED: &str = "payment_sync_applied_total";
/// The passes with disagreeing reads (since the order's latest attempt) at which the order
/// is listed for a person: a gateway whose reads of one payment differ once may be catching
/// up with itself (the next pass agrees); three times, backoff apart, it is not.
pub const DISAGREEMENTS_LISTED: i32 = 3;
/// Syncs of an order that failed on our side (the database, a bug): the order is tried
/// again with backoff and listed past the horizon like an undecided one.
pub const ERRORS: &str = "payment_sync_errors_total";

/// The kinds of [`ANOMALIES`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Anomaly {
    /// Read by id, another id came back.
    OtherPayment,
    /// The payment names another order's reference.
    OtherReference,
    /// Read by reference, a payment that another order's pay call was answered with.
    OtherOrder,
    /// Two reads of one payment disagree on its status, amount or currency.
    Disagreement,
}

impl Anomaly {
    pub const ALL: [Anomaly; 4] = [
        Anomaly::OtherPayment,
        Anomaly::OtherReference,
        Anomaly::OtherOrder,
        Anomaly::Disagreement,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Anomaly::OtherPayment => "other_payment",
            Anomaly::OtherReference => "other_reference",
            Anomaly::OtherOrder => "other_order",
            Anomaly::Disagreement => "disagreement",
        }
    }
}

/// The sync's counters at zero from the start.
pub fn export_counters() {
    let anomalies = Anomaly::ALL.map(Anomaly::as_str);
    telemetry::metrics::counters_at_zero(ANOMALIES, "kind", &anomalies);
    metrics::counter!(LISTED).increment(0);
    metrics::counter!(ERRORS).increment(0);
}

/// The event a payment read back stands for: the same rules as its webhook, under an id of
/// its own that is the same however often the sync reads it.
fn event(correlation_id: Uuid, payment: &ReadPayment, kind: &str) -> Event {
    Event {
        id: format!("{}{kind}:{}", SYNC_PREFIX, payment.id),
        kind: kind.to_owned(),
        data: EventData {
            reference: correlation_id.to_string(),
            payment_id: Some(payment.id.clone()),
            provider: Some(client::PROVIDER.to_owned()),
            amount_minor: Some(payment.amount_minor),
            currency: Some(payment.currency.clone()),
        },
    }
}

/// Applies what was agreed ([`Reading::agreed`]): every capture (one credits the order,
/// any other is listed for refund as its webhook would be), then, while the order is still
/// open, every decline. True when the order may still change at the payment service (a
/// payment still pending or in an unknown state, or a decline that must wait for a pay
/// call's answer).
pub async fn apply(
    pool: &db::Pool,
    correlation_id: Uuid,
    reading: &Reading,
    window: Duration,
) -> Result<bool, PointError> {
    let mut open = true;
    let mut waiting = false;
    for payment in reading
        .agreed()
        .filter(|p| p.status == ReadStatus::Captured)
    {
        let event = event(correlation_id, payment, CAPTURED);
        let mut conn = pool.get().await?;
        let outcome = webhook::apply(&mut conn, &event, None, window, Source::Sync).await?;
        if outcome == Outcome::Captured {
            open = false;
        }
    }
    for payment in reading.agreed() {
        match payment.status {
            ReadStatus::Declined if open => {
                let event = event(correlation_id, payment, DECLINED);
                let mut conn = pool.get().await?;
                match webhook::apply(&mut conn, &event, None, window, Source::Sync).await {
                    Ok(Outcome::Declined) => open = false,
                    Ok(_) => {}
                    Err(PointError::RetryLater(_)) => waiting = true,
                    Err(e) => return Err(e),
                }
            }
            ReadStatus::Pending | ReadStatus::Other => waiting = true,
            ReadStatus::Captured | ReadStatus::Declined => {}
        }
    }
    Ok(open && waiting)
}

/// Syncs one order taken by [`queue::take_due`]: reads its payments back (paced by `pace`),
/// checks them against each other and against earlier passes, applies what agrees, and
/// leaves it done, due again later, or listed. Every write of the outcome holds only while
/// the schedule it took is current (`Taken::generation`).
pub async fn sync_one(
    pool: &db::Pool,
    payments: &PaymentClient,
    settings: &SyncSettings,
    window: Duration,
    taken: &Taken,
    pace: &mut tokio::time::Interval,
) -> Result<(), PointError> {
    let id = taken.correlation_id;
    let plan = {
        let mut conn = pool.get().await?;
        plan(&mut conn, id, window).await?
    };
    if plan.final_ {
        let mut conn = pool.get().await?;
        return Ok(finished(&mut conn, taken).await?);
    }
    let mut reading = read(payments, id, &plan, pace, window).await;
    {
        let mut conn = pool.get().await?;
        if judge(&mut conn, id, &plan, &mut reading).await? {
            let why = disputes(id, &reading);
            return Ok(disagreed(&mut conn, settings, taken, &why).await?);
        }
    }
    let waiting = apply(pool, id, &reading, window).await?;
    let lost = plan.lost_unaccounted(&reading);
    let why = if let Some(why) = &reading.unsure {
        why.clone()
    } else if waiting || plan.in_flight {
        "a payment is still pending at the payment service".to_owned()
    } else if lost > 0 {
        format!(
            "{lost} pay call(s) whose answer was lost, and no payment of it has turned up at \
             the payment service yet"
        )
    } else {
        // Every payment is final and applied, and every lost pay call's payment has turned
        // up: none is left to wait for. The order may still be open (every payment declined
        // but one a newer attempt superseded, or a capture of another amount): the client
        // may pay it again, which schedules it again.
        let mut conn = pool.get().await?;
        return Ok(finished(&mut conn, taken).await?);
    };
    let mut conn = pool.get().await?;
    if still_open(&mut conn, id).await? {
        undecided(&mut conn, settings, taken, &why).await?;
    } else {
        finished(&mut conn, taken).await?;
    }
    Ok(())
}

/// Checks what was read against what we know, in one transaction under the order's sync row
/// (so two workers on one order compare and remember one after the other): a payment found
/// by reference that another order's pay call was answered with is set aside, one that an
/// earlier pass read otherwise is disputed, and the final readings of an undisputed pass
/// are remembered. True when something is disputed: nothing of the order is to be applied.
async fn judge(
    conn: &mut diesel_async::AsyncPgConnection,
    id: Uuid,
    plan: &read::Plan,
    reading: &mut Reading,
) -> Result<bool, PointError> {
    use diesel_async::{AsyncConnection, RunQueryDsl};
    conn.transaction::<_, PointError, _>(async |conn| {
        diesel::sql_query("SELECT 1 FROM payment_syncs WHERE correlation_id = $1 FOR UPDATE")
            .bind::<diesel::sql_types::Uuid, _>(id)
            .execute(conn)
            .await?;
        let unnamed = plan.unnamed(reading).map(|p| p.id.clone()).collect();
        let foreign = read::answered_elsewhere(conn, id, unnamed).await?;
        for payment in &foreign {
            metrics::counter!(ANOMALIES, "kind" => Anomaly::OtherOrder.as_str()).increment(1);
            tracing::error!(
                order.id = %id, payment.id = %payment, kind = Anomaly::OtherOrder.as_str(),
                "payment read back under this order's reference was made by another order's pay call; not applied"
            );
        }
        reading.set_aside(&foreign, "read back under this order's reference is another order's");
        reading.against_earlier(&earlier::readings(conn, id).await?);
        if !reading.disputed.is_empty() {
            return Ok(true);
        }
        earlier::remember(conn, id, reading.agreed()).await?;
        Ok(false)
    })
    .await
}

/// Logs and counts each disputed payment; the text kept as the order's `last_error` (and
/// listed with it): every dispute with both readings.
fn disputes(correlation_id: Uuid, reading: &Reading) -> String {
    let mut why = Vec::new();
    for dispute in &reading.disputed {
        metrics::counter!(ANOMALIES, "kind" => Anomaly::Disagreement.as_str()).increment(1);
        tracing::error!(
            order.id = %correlation_id, payment.id = %dispute.later.payment.id,
            earlier = %dispute.earlier, later = %dispute.later,
            "two reads of a payment disagree; nothing of the order applied, read again later"
        );
        why.push(dispute.to_string());
    }
    why.join("; ")
}
