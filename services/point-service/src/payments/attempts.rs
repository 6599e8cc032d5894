//! Payment attempts (no HTTP in here): each pay call of an order, recorded before the
//! payment service is asked and again with its answer, and the order's payment as the
//! state machine ([`crate::payments::machine`]) sees it. Both writes lock the order's row, like
//! the webhook, so an event is decided either before an attempt exists or after.
//!
//! Neither write is held open across the call to the payment service: `start` commits, the
//! call runs with no connection, `finish` takes a new one.

use std::time::Duration;

use diesel::prelude::*;
use diesel::sql_types::{Bool, Double, Integer, Nullable, Text};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use uuid::Uuid;

use crate::db::schema::{payment_attempts, point_orders};
use crate::error::PointError;
use crate::payments::machine::{Attempt, Decision, Input, Payment, Status};
use relayed_routes::pay::PayRefusal;

/// Which pay route made the attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Card,
    Session,
}

impl Kind {
    fn as_str(self) -> &'static str {
        match self {
            Kind::Card => "card",
            Kind::Session => "session",
        }
    }
}

/// What the payment service's answer means for the attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// 2xx with the payment's (or session's) id.
    Answered(String),
    /// 4xx: it made no payment.
    Refused,
    /// The call never reached the payment service (no connection could be made): it made
    /// no payment. Counts for nothing, like a refusal; kept apart for whoever reads it.
    NotSent,
    /// No usable answer (timeout, transport failure, 5xx, a 2xx without an id): a payment
    /// may exist whose id we never learn.
    Lost,
}

/// How long an attempt counts as in flight: past this, its pay call has certainly ended
/// (the payment service's timeout plus a margin for the recording itself), so an attempt
/// still `started` belongs to a pay route that stopped, and counts as lost.
pub fn in_flight_window(payment_timeout: Duration) -> Duration {
    payment_timeout + Duration::from_secs(30)
}

#[derive(QueryableByName)]
struct AttemptRow {
    #[diesel(sql_type = Text)]
    state: String,
    #[diesel(sql_type = Nullable<Text>)]
    payment_id: Option<String>,
    #[diesel(sql_type = Bool)]
    in_flight: bool,
}

#[derive(QueryableByName)]
struct CapturedRow {
    #[diesel(sql_type = Text)]
    payment_id: String,
}

/// The order's status, locked (`FOR UPDATE`) until the transaction ends; `None` when there
/// is no such order.
pub async fn lock_status(
    conn: &mut AsyncPgConnection,
    correlation_id: Uuid,
) -> Result<Option<Status>, PointError> {
    Ok(point_orders::table
        .find(correlation_id)
        .select(point_orders::status)
        .for_update()
        .first(conn)
        .await
        .optional()?)
}

/// The order's payment for the machine. The caller holds the order's lock. `captured` is
/// what [`decided_captures`] found for the event being decided (empty for a pay call).
pub async fn load(
    conn: &mut AsyncPgConnection,
    correlation_id: Uuid,
    status: Status,
    window: Duration,
    captured: Vec<String>,
) -> Result<Payment, PointError> {
    Ok(Payment {
        status,
        attempts: of_order(conn, correlation_id, window).await?,
        captured,
    })
}

/// The order's attempts as the machine sees them, oldest first; one still `started` past
/// `window` counts as lost.
pub async fn of_order(
    conn: &mut AsyncPgConnection,
    correlation_id: Uuid,
    window: Duration,
) -> QueryResult<Vec<Attempt>> {
    let rows: Vec<AttemptRow> = diesel::sql_query(
        "SELECT state, payment_id,
                (state = 'started' AND started_at > now() - make_interval(secs => $2)) AS in_flight
         FROM payment_attempts WHERE correlation_id = $1 ORDER BY id",
    )
    .bind::<diesel::sql_types::Uuid, _>(correlation_id)
    .bind::<Double, _>(window.as_secs_f64())
    .load(conn)
    .await?;
    Ok(rows
        .into_iter()
        .map(|row| match (row.state.as_str(), row.payment_id) {
            ("answered", Some(id)) => Attempt::Answered(id),
            ("refused" | "unsent", _) => Attempt::Refused,
            ("started", _) if row.in_flight => Attempt::InFlight,
            _ => Attempt::Lost,
        })
        .collect())
}

/// `payment_id` (as a one-element list) when a capture of that payment was already decided
/// by another event than `event_id`: credited or listed for refund (an unreadable one too).
/// Found by the payment id alone, whatever reference (or order) the earlier event named:
/// one payment takes the money once, however its events spell the reference. The caller
/// holds the payment's lock ([`lock_payment`]).
pub async fn decided_captures(
    conn: &mut AsyncPgConnection,
    payment_id: Option<&str>,
    event_id: &str,
) -> Result<Vec<String>, PointError> {
    let Some(payment_id) = payment_id else {
        return Ok(Vec::new());
    };
    let found: Vec<CapturedRow> = diesel::sql_query(
        "SELECT $1 AS payment_id
         WHERE EXISTS (SELECT 1 FROM payment_events
                       WHERE payment_id = $1 AND id <> $2 AND type = 'payment_captured')
            OR EXISTS (SELECT 1 FROM unapplied_captures WHERE payment_id = $1)",
    )
    .bind::<Text, _>(payment_id)
    .bind::<Text, _>(event_id)
    .load(conn)
    .await?;
    Ok(found.into_iter().map(|c| c.payment_id).collect())
}

/// The order whose pay call was answered with `payment_id`, when it is not `order`: a
/// capture of that payment belongs to it, whatever order the capture names.
pub async fn answered_elsewhere(
    conn: &mut AsyncPgConnection,
    payment_id: Option<&str>,
    order: Uuid,
) -> Result<Option<Uuid>, PointError> {
    let Some(payment_id) = payment_id else {
        return Ok(None);
    };
    Ok(payment_attempts::table
        .filter(payment_attempts::payment_id.eq(payment_id))
        .filter(payment_attempts::correlation_id.ne(order))
        .select(payment_attempts::correlation_id)
        .first(conn)
        .await
        .optional()?)
}

/// The advisory lock class of a payment id (the two-key form, apart from `migrate`'s
/// one-key lock).
const PAYMENT_LOCK: i32 = 0x7061_0001;

/// Locks `payment_id` until the transaction ends, so that two events of one payment (even
/// naming different orders, on two replicas) are decided one after the other. Taken before
/// any order's row lock.
pub async fn lock_payment(
    conn: &mut AsyncPgConnection,
    payment_id: Option<&str>,
) -> Result<(), PointError> {
    if let Some(payment_id) = payment_id {
        diesel::sql_query("SELECT pg_advisory_xact_lock($1, hashtext($2))")
            .bind::<Integer, _>(PAYMENT_LOCK)
            .bind::<Text, _>(payment_id)
            .execute(conn)
            .await?;
    }
    Ok(())
}

/// Records a new attempt if the order is still payable (it may have been paid or failed
/// since the pay route's first read); `Err(status)` when it is not, and the refusal of
/// `orders::payable::still_sold` when `order` lapsed or its offer changed since (asked
/// again here, under the order's lock). Schedules the
/// order's payment sync `sync_after` from now, in the same transaction: whatever happens to
/// the call or its webhook, the payment service is asked about it then. Commits before the
/// payment service is asked.
pub async fn start(
    conn: &mut AsyncPgConnection,
    order: &crate::orders::OrderRow,
    kind: Kind,
    window: Duration,
    max_attempts: u64,
    sync_after: Duration,
    lapse_hours: u64,
) -> Result<Result<i64, Status>, PointError> {
    let correlation_id = order.correlation_id;
    conn.transaction(async |conn| {
        let status = lock_status(conn, correlation_id)
            .await?
            .ok_or_else(|| PointError::Internal("the order being paid vanished".into()))?;
        let payment = load(conn, correlation_id, status, window, Vec::new()).await?;
        let made = payment.attempts.len() as u64;
        match payment.step(&Input::PayStart).1 {
            Decision::Pay => {}
            Decision::NotPayable(status) => return Ok(Err(status)),
            other => {
                return Err(PointError::Internal(format!(
                    "a pay call decided {other:?}"
                )));
            }
        }
        crate::orders::payable::still_sold(conn, order, lapse_hours).await?;
        // Each pay call asks the payment service and stores an attempt: bounded per order,
        // for the order's life, so no wait lifts it and the 429 names none.
        if made >= max_attempts {
            return Err(PayRefusal::TooManyAttempts(correlation_id, max_attempts).into());
        }
        let id = diesel::insert_into(payment_attempts::table)
            .values((
                payment_attempts::correlation_id.eq(correlation_id),
                payment_attempts::kind.eq(kind.as_str()),
                payment_attempts::state.eq("started"),
            ))
            .returning(payment_attempts::id)
            .get_result(conn)
            .await?;
        crate::payments::sync::queue::schedule(conn, correlation_id, sync_after).await?;
        Ok(Ok(id))
    })
    .await
}

/// Records the payment service's answer to attempt `id`. The order does not move here (the
/// pay routes never move it); a decline that waited for this answer is decided when the
/// payment service delivers it again.
pub async fn finish(
    conn: &mut AsyncPgConnection,
    correlation_id: Uuid,
    id: i64,
    answer: &Answer,
) -> Result<(), PointError> {
    let (state, payment_id) = match answer {
        Answer::Answered(payment_id) => ("answered", Some(payment_id.as_str())),
        Answer::Refused => ("refused", None),
        Answer::NotSent => ("unsent", None),
        Answer::Lost => ("lost", None),
    };
    conn.transaction(async |conn| {
        lock_status(conn, correlation_id).await?;
        diesel::update(payment_attempts::table.find(id))
            .set((
                payment_attempts::state.eq(state),
                payment_attempts::payment_id.eq(payment_id),
                payment_attempts::answered_at.eq(diesel::dsl::now),
            ))
            .execute(conn)
            .await?;
        Ok(())
    })
    .await
}
