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
//! - A read that fails (the payment service down or slow), or a payment still pending,
//!   leaves the order open and tries it again later, doubling the wait each time up to
//!   [`MAX_BACKOFF`]; past the horizon (`PAYMENT_SYNC_HORIZON_DAYS`) it is listed for a
//!   person instead (`point-service unsynced-orders`), logged at error level and counted.
//! - A read-back that names another order's reference, or another payment than the one
//!   asked for, is not applied: it is logged at error level and counted in
//!   `payment_sync_anomalies_total{kind}`, and the order is tried again later.
//!
//! No connection is held while the payment service is asked: the order's attempts are read
//! and the connection returned first, and each apply takes a new one.

pub mod gauges;
pub mod listed;
pub mod task;

use std::time::Duration;

use diesel::prelude::*;
use diesel::sql_types::{Bool, Double, Integer, Text};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use uuid::Uuid;

use crate::attempts;
use crate::clients::payments::{PaymentClient, ReadPayment, ReadStatus};
use crate::config::SyncSettings;
use crate::db::schema::payment_syncs;
use crate::error::PointError;
use crate::payment_state::Attempt;
use crate::webhook::{self, Event, EventData, Outcome, Source};

/// The longest wait between two reads of one order.
pub const MAX_BACKOFF: Duration = Duration::from_secs(3600);

/// Orders listed for a person past the horizon.
pub const LISTED: &str = "payment_sync_orders_listed_total";
/// Read-backs not applied because they contradict what was asked, by kind.
pub const ANOMALIES: &str = "payment_sync_anomalies_total";
/// Read-back payments applied, by the outcome the webhook's rules gave them.
pub const APPLIED: &str = "payment_sync_applied_total";
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
}

impl Anomaly {
    pub const ALL: [Anomaly; 2] = [Anomaly::OtherPayment, Anomaly::OtherReference];

    pub fn as_str(self) -> &'static str {
        match self {
            Anomaly::OtherPayment => "other_payment",
            Anomaly::OtherReference => "other_reference",
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

/// Schedules the order's sync `after` from now: called in a pay attempt's transaction, so
/// the order's latest attempt decides when (and the horizon counts from it).
pub async fn schedule(
    conn: &mut AsyncPgConnection,
    correlation_id: Uuid,
    after: Duration,
) -> QueryResult<()> {
    diesel::sql_query(
        "INSERT INTO payment_syncs (correlation_id, since, due_at) \
         VALUES ($1, now(), now() + make_interval(secs => $2)) \
         ON CONFLICT (correlation_id) DO UPDATE \
         SET since = now(), due_at = EXCLUDED.due_at, tries = 0, last_error = NULL, \
             listed_at = NULL, resolved_at = NULL, resolution = NULL, \
             generation = payment_syncs.generation + 1",
    )
    .bind::<diesel::sql_types::Uuid, _>(correlation_id)
    .bind::<Double, _>(after.as_secs_f64())
    .execute(conn)
    .await?;
    Ok(())
}

/// Schedules the order's sync now, if it is still open: a signed event of a type the
/// service does not know named it, and it may say the payment was taken. Listed orders are
/// read again too. The horizon keeps counting from the latest attempt.
pub async fn schedule_now(conn: &mut AsyncPgConnection, correlation_id: Uuid) -> QueryResult<()> {
    diesel::sql_query(
        "INSERT INTO payment_syncs (correlation_id, since, due_at) \
         SELECT correlation_id, now(), now() FROM point_orders \
         WHERE correlation_id = $1 AND status = 'initial_order' \
         ON CONFLICT (correlation_id) DO UPDATE \
         SET due_at = now(), listed_at = NULL, resolved_at = NULL, resolution = NULL, \
             generation = payment_syncs.generation + 1",
    )
    .bind::<diesel::sql_types::Uuid, _>(correlation_id)
    .execute(conn)
    .await?;
    Ok(())
}

/// The order is final: nothing is left to sync. Called where the order moves, in the same
/// transaction.
pub async fn done(conn: &mut AsyncPgConnection, correlation_id: Uuid) -> QueryResult<()> {
    diesel::delete(payment_syncs::table.find(correlation_id))
        .execute(conn)
        .await?;
    Ok(())
}

/// The sync `taken` found nothing left to wait for: its row goes, unless a newer schedule
/// (a pay attempt or an unknown event since it was taken) replaced it.
async fn finished(conn: &mut AsyncPgConnection, taken: &Taken) -> QueryResult<()> {
    diesel::delete(
        payment_syncs::table
            .find(taken.correlation_id)
            .filter(payment_syncs::generation.eq(taken.generation)),
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// An order taken for one sync.
#[derive(Debug, QueryableByName)]
pub struct Taken {
    #[diesel(sql_type = diesel::sql_types::Uuid)]
    pub correlation_id: Uuid,
    /// Reads of this order since its latest attempt, this one included.
    #[diesel(sql_type = Integer)]
    pub tries: i32,
    /// The horizon has passed since its latest attempt.
    #[diesel(sql_type = Bool)]
    pub past_horizon: bool,
    /// The schedule this sync answers; its outcome is written only while it is current.
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    pub generation: i64,
}

/// Takes the most overdue order, if any, pushing its due time `lease` ahead. `SKIP LOCKED`
/// lets two workers (a leader and one whose lease ran out under it) never take one order
/// at once.
pub async fn take_due(
    conn: &mut AsyncPgConnection,
    lease: Duration,
    horizon: Duration,
) -> QueryResult<Option<Taken>> {
    diesel::sql_query(
        "UPDATE payment_syncs s \
         SET due_at = now() + make_interval(secs => $1), tries = s.tries + 1 \
         WHERE s.correlation_id = (SELECT correlation_id FROM payment_syncs \
                                   WHERE listed_at IS NULL AND due_at <= now() \
                                   ORDER BY due_at LIMIT 1 FOR UPDATE SKIP LOCKED) \
         RETURNING s.correlation_id, s.tries, s.generation, \
                   s.since < now() - make_interval(secs => $2) AS past_horizon",
    )
    .bind::<Double, _>(lease.as_secs_f64())
    .bind::<Double, _>(horizon.as_secs_f64())
    .get_result(conn)
    .await
    .optional()
}

/// What is known of an order before its payments are read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// The order is final (or gone): nothing to read.
    pub final_: bool,
    /// The payment ids its pay calls were answered with, oldest first, each once.
    pub ids: Vec<String>,
    /// A pay call's answer was lost (or there is no attempt at all): its payments are
    /// found by the order's reference.
    pub by_reference: bool,
    /// A pay call is still waiting for its answer: read again later.
    pub in_flight: bool,
}

/// The order's [`Plan`] from its status and attempts. `window` is how long a pay call's
/// attempt counts as in flight.
pub async fn plan(
    conn: &mut AsyncPgConnection,
    correlation_id: Uuid,
    window: Duration,
) -> QueryResult<Plan> {
    if !still_open(conn, correlation_id).await? {
        return Ok(Plan {
            final_: true,
            ids: Vec::new(),
            by_reference: false,
            in_flight: false,
        });
    }
    let attempts = attempts::of_order(conn, correlation_id, window).await?;
    let mut ids: Vec<String> = Vec::new();
    for attempt in &attempts {
        if let Attempt::Answered(id) = attempt
            && !ids.contains(id)
        {
            ids.push(id.clone());
        }
    }
    Ok(Plan {
        final_: false,
        ids,
        by_reference: attempts.is_empty() || attempts.contains(&Attempt::Lost),
        in_flight: attempts.contains(&Attempt::InFlight),
    })
}

/// What the payment service said of an order's payments.
#[derive(Debug, Default)]
pub struct Reading {
    /// Payments that belong to the order, each once.
    pub payments: Vec<ReadPayment>,
    /// Something is not known yet: a read failed, an id is unknown to the payment service,
    /// an answer contradicted the question. Why, for the order's `last_error`.
    pub unsure: Option<String>,
}

impl Reading {
    fn unsure(&mut self, why: String) {
        self.unsure.get_or_insert(why);
    }

    /// Adds a payment read once more (by id and by reference) once; two readings of one
    /// payment that disagree decide nothing this time.
    fn add(&mut self, payment: ReadPayment) {
        match self.payments.iter().find(|p| p.id == payment.id) {
            None => self.payments.push(payment),
            Some(seen) if *seen == payment => {}
            Some(_) => self.unsure(format!(
                "payment {} read back twice, differently",
                payment.id
            )),
        }
    }
}

/// Reads the order's payments back, waiting on `pace` before each call.
pub async fn read(
    payments: &PaymentClient,
    correlation_id: Uuid,
    plan: &Plan,
    pace: &mut tokio::time::Interval,
) -> Reading {
    let reference = correlation_id.to_string();
    let mut reading = Reading::default();
    let belongs = |payment: &ReadPayment, reading: &mut Reading| {
        if webhook::canonical_reference(&payment.reference) == reference {
            true
        } else {
            anomaly(Anomaly::OtherReference, correlation_id, payment);
            reading.unsure(format!(
                "payment {} read back names another reference",
                payment.id
            ));
            false
        }
    };
    for id in &plan.ids {
        pace.tick().await;
        match payments.payment(id).await {
            Ok(Some(payment)) if payment.id != *id => {
                anomaly(Anomaly::OtherPayment, correlation_id, &payment);
                reading.unsure(format!("payment {id} read back as another payment"));
            }
            Ok(Some(payment)) => {
                if belongs(&payment, &mut reading) {
                    reading.add(payment);
                }
            }
            Ok(None) => reading.unsure(format!("payment {id} is unknown to the payment service")),
            Err(e) => reading.unsure(format!("payment {id}: {e}")),
        }
    }
    if plan.by_reference {
        pace.tick().await;
        match payments.payments_for(&reference).await {
            Ok(found) => {
                for payment in found {
                    if belongs(&payment, &mut reading) {
                        reading.add(payment);
                    }
                }
            }
            Err(e) => reading.unsure(format!("payments of the reference: {e}")),
        }
    }
    reading
}

fn anomaly(kind: Anomaly, correlation_id: Uuid, payment: &ReadPayment) {
    metrics::counter!(ANOMALIES, "kind" => kind.as_str()).increment(1);
    tracing::error!(
        order.id = %correlation_id, payment.id = %payment.id,
        payment.reference = %payment.reference, kind = kind.as_str(),
        "payment read back contradicts the question; not applied (is the payment service answering for another order?)"
    );
}

/// The event a payment read back stands for: the same rules as its webhook, under an id of
/// its own that is the same however often the sync reads it.
fn event(correlation_id: Uuid, payment: &ReadPayment, kind: &str) -> Event {
    Event {
        id: format!("{}{kind}:{}", webhook::SYNC_PREFIX, payment.id),
        kind: kind.to_owned(),
        data: EventData {
            reference: correlation_id.to_string(),
            payment_id: Some(payment.id.clone()),
            provider: Some(crate::handlers::pay::PROVIDER.to_owned()),
            amount_minor: Some(payment.amount_minor),
            currency: Some(payment.currency.clone()),
        },
    }
}

/// Applies what was read: every capture (one credits the order, any other is listed for
/// refund as its webhook would be), then, while the order is still open, every decline.
/// True when the order may still change at the payment service (a payment still pending
/// or in an unknown state, or a decline that must wait for a pay call's answer).
pub async fn apply(
    pool: &db::Pool,
    correlation_id: Uuid,
    reading: &Reading,
    window: Duration,
) -> Result<bool, PointError> {
    let mut open = true;
    let mut waiting = false;
    for payment in reading
        .payments
        .iter()
        .filter(|p| p.status == ReadStatus::Captured)
    {
        let event = event(correlation_id, payment, webhook::CAPTURED);
        let mut conn = pool.get().await?;
        let outcome = webhook::apply(&mut conn, &event, None, window, Source::Sync).await?;
        if outcome == Outcome::Captured {
            open = false;
        }
    }
    for payment in &reading.payments {
        match payment.status {
            ReadStatus::Declined if open => {
                let event = event(correlation_id, payment, webhook::DECLINED);
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

/// How long the order waits before its next read after `tries` reads: `after`, doubled
/// with each read, at most [`MAX_BACKOFF`].
pub fn backoff(settings: &SyncSettings, tries: i32) -> Duration {
    let doublings = u32::try_from(tries.saturating_sub(1)).unwrap_or(0).min(20);
    settings
        .after
        .saturating_mul(1 << doublings)
        .min(MAX_BACKOFF)
}

/// After a read that left the order open and undecided: the next read `wait` away, with
/// why, unless a newer schedule replaced the one `taken` answers.
pub async fn retry_later(
    conn: &mut AsyncPgConnection,
    taken: &Taken,
    wait: Duration,
    why: &str,
) -> QueryResult<()> {
    diesel::sql_query(
        "UPDATE payment_syncs SET due_at = now() + make_interval(secs => $2), last_error = $3 \
         WHERE correlation_id = $1 AND generation = $4",
    )
    .bind::<diesel::sql_types::Uuid, _>(taken.correlation_id)
    .bind::<Double, _>(wait.as_secs_f64())
    .bind::<Text, _>(why)
    .bind::<diesel::sql_types::BigInt, _>(taken.generation)
    .execute(conn)
    .await?;
    Ok(())
}

/// Past the horizon and still undecided: listed for a person, read no more (unless a newer
/// schedule replaced the one `taken` answers).
pub async fn list(conn: &mut AsyncPgConnection, taken: &Taken, why: &str) -> QueryResult<()> {
    let listed = diesel::update(
        payment_syncs::table
            .find(taken.correlation_id)
            .filter(payment_syncs::generation.eq(taken.generation)),
    )
    .set((
        payment_syncs::listed_at.eq(diesel::dsl::now),
        payment_syncs::last_error.eq(why),
    ))
    .execute(conn)
    .await?;
    if listed == 1 {
        metrics::counter!(LISTED).increment(1);
        tracing::error!(
            order.id = %taken.correlation_id, reason = why,
            "payment still undecided past the sync horizon; listed for a person (point-service unsynced-orders)"
        );
    }
    Ok(())
}

/// The order stays open with a payment undecided (`why`): read again after the backoff, or
/// listed for a person past the horizon. Also what becomes of an order whose sync failed
/// (an error of ours or the database's), so that one that keeps failing is listed too.
pub async fn undecided(
    conn: &mut AsyncPgConnection,
    settings: &SyncSettings,
    taken: &Taken,
    why: &str,
) -> QueryResult<()> {
    if taken.past_horizon {
        list(conn, taken, why).await
    } else {
        retry_later(conn, taken, backoff(settings, taken.tries), why).await
    }
}

/// Syncs one order taken by [`take_due`]: reads its payments back (paced by `pace`), applies
/// them, and leaves it done, due again later, or listed. Every write of the outcome holds
/// only while the schedule it took is current (`Taken::generation`).
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
    let reading = read(payments, id, &plan, pace).await;
    let waiting = apply(pool, id, &reading, window).await?;
    let why = match (&reading.unsure, waiting || plan.in_flight) {
        (Some(why), _) => why.clone(),
        (None, true) => "a payment is still pending at the payment service".to_owned(),
        (None, false) => {
            // Every payment is final and applied; none is left to wait for. The order may
            // still be open (every payment declined but one a newer attempt superseded, or
            // none made): the client may pay it again, which schedules it again.
            let mut conn = pool.get().await?;
            return Ok(finished(&mut conn, taken).await?);
        }
    };
    let mut conn = pool.get().await?;
    if still_open(&mut conn, id).await? {
        undecided(&mut conn, settings, taken, &why).await?;
    } else {
        finished(&mut conn, taken).await?;
    }
    Ok(())
}

/// The order is still `initial_order`.
async fn still_open(conn: &mut AsyncPgConnection, correlation_id: Uuid) -> QueryResult<bool> {
    use crate::db::schema::point_orders;
    let status: Option<String> = point_orders::table
        .find(correlation_id)
        .select(point_orders::status)
        .first(conn)
        .await
        .optional()?;
    Ok(status.as_deref() == Some("initial_order"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn payment(status: ReadStatus) -> ReadPayment {
        ReadPayment {
            id: "pay_1".into(),
            reference: "r".into(),
            status,
            amount_minor: 1500,
            currency: "SAR".into(),
        }
    }

    #[test]
    fn a_payment_read_twice_alike_counts_once_and_differently_decides_nothing() {
        let mut reading = Reading::default();
        reading.add(payment(ReadStatus::Captured));
        reading.add(payment(ReadStatus::Captured));
        assert_eq!((reading.payments.len(), &reading.unsure), (1, &None));
        reading.add(payment(ReadStatus::Declined));
        assert_eq!(
            reading.unsure.as_deref(),
            Some("payment pay_1 read back twice, differently")
        );
    }

    #[test]
    fn the_wait_doubles_from_the_delay_up_to_an_hour() {
        let settings = SyncSettings {
            after: Duration::from_secs(120),
            ..SyncSettings::default()
        };
        let waits: Vec<u64> = (1..=8).map(|t| backoff(&settings, t).as_secs()).collect();
        assert_eq!(waits, [120, 240, 480, 960, 1920, 3600, 3600, 3600]);
        assert_eq!(backoff(&settings, 0).as_secs(), 120);
        assert_eq!(backoff(&settings, i32::MAX), MAX_BACKOFF);
    }
}
