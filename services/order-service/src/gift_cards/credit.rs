//! One try at crediting a redemption, by whoever holds its lease (the redeeming request or
//! a replica's retry task): the lease is taken in a short statement, the credit call goes
//! out with no database connection held, and the outcome is written back.
//!
//! The call is safe to repeat: the point service applies a reference
//! (`gift-card:<redemption id>`) once and answers the first result again, and the legacy
//! call carries the reference in its body and as `Idempotency-Key`. So a holder that dies
//! after the call but before writing it down costs nothing but a second call after its
//! lease runs out.

use std::time::Duration;

use bigdecimal::BigDecimal;
use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::query_builder::{BoxedSqlQuery, SqlQuery};
use diesel::sql_types::{BigInt, Double, Integer, Nullable, Numeric, Text};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use serde_json::json;

use crate::config::{CreditTarget, GiftCardRetry};
use crate::state::Credit;

/// A redemption whose lease this process holds: it may send the credit now.
#[derive(Debug, QueryableByName)]
pub struct Lease {
    #[diesel(sql_type = BigInt)]
    pub id: i64,
    #[diesel(sql_type = BigInt)]
    pub client_id: i64,
    #[diesel(sql_type = Numeric)]
    pub points: BigDecimal,
    /// The redemption's attempt count once this lease was taken: it fences this holder's
    /// release, which applies only while no later holder has taken the lease.
    #[diesel(sql_type = Integer)]
    pub attempt: i32,
}

impl Lease {
    /// What the credit is known by on the other side; the same for every try.
    pub fn reference(&self) -> String {
        format!("gift-card:{}", self.id)
    }
}

/// Who tries a credit, for the logs and the metrics.
#[derive(Debug, Clone, Copy)]
pub enum By {
    Request,
    Retry,
}

impl By {
    fn label(self) -> &'static str {
        match self {
            Self::Request => "request",
            Self::Retry => "retry",
        }
    }
}

/// A duration as the seconds that `make_interval(secs => …)` takes.
fn seconds(d: Duration) -> f64 {
    d.as_secs_f64()
}

/// How a statement that takes a lease ends: the columns of a [`Lease`].
const RETURNING_LEASE: &str = "RETURNING id, client_id, points, attempts AS attempt";

/// Runs `statement`, which takes a lease of `lease`: its last parameter is the lease's
/// length (`make_interval(secs => $n)`) and it ends with [`RETURNING_LEASE`]. `None` when it
/// matched no row.
async fn take(
    conn: &mut AsyncPgConnection,
    statement: BoxedSqlQuery<'_, Pg, SqlQuery>,
    lease: Duration,
) -> QueryResult<Option<Lease>> {
    statement
        .bind::<Double, _>(seconds(lease))
        .get_result(conn)
        .await
        .optional()
}

/// Takes the lease of the most overdue pending redemption that nobody holds, if any.
/// `SKIP LOCKED` lets several replicas scan at once without waiting on each other; the
/// lease (not the row lock, which ends with the statement) keeps the others off it while
/// the call is out.
pub async fn take_due(conn: &mut AsyncPgConnection, lease: Duration) -> QueryResult<Option<Lease>> {
    let statement = diesel::sql_query(format!(
        "UPDATE gift_card_redemptions r \
         SET lease_until = now() + make_interval(secs => $1), attempts = r.attempts + 1 \
         WHERE r.id = (SELECT id FROM gift_card_redemptions \
                       WHERE status = 'pending' AND next_attempt_at <= now() \
                         AND (lease_until IS NULL OR lease_until <= now()) \
                       ORDER BY next_attempt_at, id LIMIT 1 \
                       FOR UPDATE SKIP LOCKED) \
         {RETURNING_LEASE}"
    ))
    .into_boxed();
    take(conn, statement, lease).await
}

/// Takes the lease of a new redemption of `code` by the client; `None` when the code
/// already has one (then the caller reads it under a row lock).
pub async fn take_new(
    conn: &mut AsyncPgConnection,
    code: &str,
    client_id: i64,
    points: &BigDecimal,
    lease: Duration,
) -> QueryResult<Option<Lease>> {
    let statement = diesel::sql_query(format!(
        "INSERT INTO gift_card_redemptions (code, client_id, points, attempts, lease_until) \
         VALUES ($1, $2, $3, 1, now() + make_interval(secs => $4)) \
         ON CONFLICT (code) DO NOTHING \
         {RETURNING_LEASE}"
    ))
    .into_boxed()
    .bind::<Text, _>(code)
    .bind::<BigInt, _>(client_id)
    .bind::<Numeric, _>(points);
    take(conn, statement, lease).await
}

/// Takes the lease of a pending redemption that the caller has locked and found free.
pub async fn take_locked(
    conn: &mut AsyncPgConnection,
    id: i64,
    lease: Duration,
) -> QueryResult<Lease> {
    let statement = diesel::sql_query(format!(
        "UPDATE gift_card_redemptions \
         SET lease_until = now() + make_interval(secs => $2), attempts = attempts + 1 \
         WHERE id = $1 \
         {RETURNING_LEASE}"
    ))
    .into_boxed()
    .bind::<BigInt, _>(id);
    // The caller holds the row's lock, so the row is there.
    take(conn, statement, lease)
        .await?
        .ok_or(diesel::result::Error::NotFound)
}

/// Why a try did not land.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Failure {
    /// The other side refused this credit (a 4xx other than 409 and 429): the same body
    /// again will be refused again until someone fixes one side, so it is retried only
    /// after [`REFUSED_BACKOFF`] and logged at error level every time.
    #[error("credit refused with {0}")]
    Refused(u16),
    /// No answer in time, no connection, or an answer that may heal (5xx, 409, 429).
    #[error("{0}")]
    Failed(String),
}

/// How long a refused credit waits before its next try by the retry task: a few tries a
/// day, in case the fix was made on the other side, instead of one every few minutes.
pub const REFUSED_BACKOFF: Duration = Duration::from_secs(6 * 3600);

impl Failure {
    /// The wait before the retry task tries the credit again.
    pub fn backoff(&self, retry: &GiftCardRetry, attempt: i32) -> Duration {
        match self {
            Self::Refused(_) => REFUSED_BACKOFF,
            Self::Failed(_) => retry.backoff(attempt),
        }
    }
}

/// Sends the credit. `Err` is why it cannot be counted as done.
///
/// The points go as the exact decimal (plain notation, no trailing zeros: `1.23456`), which
/// the point service reads exactly; the spec's 4-decimal text is for answers only, and
/// sending it would credit 1.2346 for 1.23456, or "0" (refused) for 0.00001.
pub async fn send(credit: &Credit, lease: &Lease) -> Result<(), Failure> {
    let reference = lease.reference();
    let points = domain::decimal::to_number(&lease.points).to_string();
    let request = match &credit.target {
        CreditTarget::PointService => credit
            .http
            .post(format!("{}/internal/v1/credits", credit.point_service))
            .header("x-internal-token", credit.internal_token.expose())
            .json(&json!({"client_id": lease.client_id, "points": points, "reference": reference, "reason": "gift_card"})),
        // The legacy side learns the reference twice: in the body, and as the header that
        // HTTP APIs commonly deduplicate retried requests by.
        CreditTarget::Legacy(url) => credit
            .http
            .post(format!("{url}/api/v1/points/add"))
            .header("idempotency-key", &reference)
            .json(&json!({"client_id": lease.client_id, "points": points, "reference": reference})),
    };
    match request.send().await {
        Ok(response) if response.status().is_success() => Ok(()),
        Ok(response)
            if response.status().is_client_error()
                && !matches!(response.status().as_u16(), 409 | 429) =>
        {
            Err(Failure::Refused(response.status().as_u16()))
        }
        Ok(response) => Err(Failure::Failed(format!(
            "credit answered {}",
            response.status()
        ))),
        Err(e) => Err(Failure::Failed(format!(
            "credit failed: {}",
            telemetry::client::error_chain(&e)
        ))),
    }
}

/// Writes down that the credit landed. With `answer` (the redeeming request, about to
/// answer), also takes the redemption's one 200: true when no 200 was given for it yet.
pub async fn credited(conn: &mut AsyncPgConnection, id: i64, answer: bool) -> QueryResult<bool> {
    use catalog_db::schema::gift_card_redemptions as r;
    conn.transaction(async |conn| {
        let answered_at: Option<chrono::DateTime<chrono::Utc>> = r::table
            .find(id)
            .select(r::answered_at)
            .for_update()
            .first(conn)
            .await?;
        let first_answer = answer && answered_at.is_none();
        diesel::sql_query(
            "UPDATE gift_card_redemptions \
             SET status = 'credited', credited_at = COALESCE(credited_at, now()), \
                 lease_until = NULL, last_error = NULL, \
                 answered_at = CASE WHEN $2 THEN now() ELSE answered_at END \
             WHERE id = $1",
        )
        .bind::<BigInt, _>(id)
        .bind::<diesel::sql_types::Bool, _>(first_answer)
        .execute(conn)
        .await?;
        Ok(first_answer)
    })
    .await
}

/// Gives back a lease whose credit failed, with the next try `backoff` away. Does nothing
/// when the credit landed meanwhile or a later holder has the lease (its attempt count is
/// no longer this one's).
pub async fn release(
    conn: &mut AsyncPgConnection,
    lease: &Lease,
    backoff: Duration,
    error: &Failure,
) -> QueryResult<()> {
    diesel::sql_query(
        "UPDATE gift_card_redemptions \
         SET lease_until = NULL, next_attempt_at = now() + make_interval(secs => $3), \
             last_error = $4 \
         WHERE id = $1 AND attempts = $2 AND status = 'pending'",
    )
    .bind::<BigInt, _>(lease.id)
    .bind::<Integer, _>(lease.attempt)
    .bind::<Double, _>(seconds(backoff))
    .bind::<Nullable<Text>, _>(Some(error.to_string()))
    .execute(conn)
    .await?;
    Ok(())
}

/// After this many failed tries of one credit, each further failure is logged as an error
/// (before: a warning, since a short outage of the point service heals on its own).
const ERROR_AFTER: i32 = 5;

/// Logs and counts one try's outcome (`gift_card_credit_attempts_total{by, outcome}`).
pub fn report(by: By, lease: &Lease, outcome: &Result<(), Failure>, retry: &GiftCardRetry) {
    let by_label = by.label();
    match outcome {
        Ok(()) => {
            metrics::counter!("gift_card_credit_attempts_total", "by" => by_label, "outcome" => "credited")
                .increment(1);
            tracing::info!(
                redemption.id = lease.id,
                client.id = lease.client_id,
                attempt = lease.attempt,
                by = by_label,
                "gift-card credit landed"
            );
        }
        Err(error) => {
            let outcome = match error {
                Failure::Refused(_) => "refused",
                Failure::Failed(_) => "failed",
            };
            metrics::counter!("gift_card_credit_attempts_total", "by" => by_label, "outcome" => outcome)
                .increment(1);
            let next_in = error.backoff(retry, lease.attempt).as_secs_f64();
            if matches!(error, Failure::Refused(_)) {
                tracing::error!(
                    redemption.id = lease.id,
                    client.id = lease.client_id,
                    points = %lease.points,
                    attempt = lease.attempt,
                    by = by_label,
                    next_try_in_seconds = next_in,
                    error.message = %error,
                    "gift-card credit refused: it stays pending and is retried rarely; look at why the other side refuses it"
                );
            } else {
                // One line at either level (a tracing level is fixed where the line is written).
                macro_rules! failed {
                    ($level:ident, $message:literal) => {
                        tracing::$level!(
                            redemption.id = lease.id,
                            client.id = lease.client_id,
                            attempt = lease.attempt,
                            by = by_label,
                            next_try_in_seconds = next_in,
                            error.message = %error,
                            $message
                        )
                    };
                }
                if lease.attempt >= ERROR_AFTER {
                    failed!(
                        error,
                        "gift-card credit keeps failing; it stays pending and is retried"
                    );
                } else {
                    failed!(
                        warn,
                        "gift-card credit failed; it stays pending and is retried"
                    );
                }
            }
        }
    }
}
