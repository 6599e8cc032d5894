//! One try at crediting a redemption, by whoever holds its lease (the redeeming request or
//! a replica's retry task): the lease is taken in a short statement, the credit call goes
//! out with no database connection held, and the outcome is written back.
//!
//! Where the credit goes (the point service or the legacy system) and the reference it
//! goes under are the redemption's own, stored when it is made: every try sends that
//! reference there, whatever `USE_POINT_SERVICE` says by then or on the replica making the
//! try, so a credit retried after the switch never lands in the other ledger too. A legacy
//! redemption tried by a process without `LEGACY_URL` is not sent anywhere: it stays
//! pending, logged at error level, until a process with the URL credits it.
//!
//! The reference is `gift-card:<code>` (the code as stored, unique and redeemed once,
//! ever), not a database counter that a catalog restored from a backup could hand out
//! again; redemptions made before references were stored keep the `gift-card:<id>` they
//! were first sent under. The call is safe to repeat: the point service applies a
//! reference once and answers the first result again, and the legacy call carries the
//! reference in its body and as `Idempotency-Key`. So a holder that dies after the call but
//! before writing it down costs nothing but a second call after its lease runs out.

use std::time::Duration;

use bigdecimal::BigDecimal;
use diesel::deserialize::{self, FromSql};
use diesel::pg::{Pg, PgValue};
use diesel::prelude::*;
use diesel::query_builder::{BoxedSqlQuery, SqlQuery};
use diesel::sql_types::{BigInt, Double, Integer, Nullable, Numeric, Text};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use serde_json::json;

use crate::config::GiftCardRetry;
use crate::state::Credit;

/// Where a redemption is credited: its `credit_target` column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CreditTarget {
    /// The point service's `/internal/v1/credits`.
    PointService,
    /// The legacy add-point call, `POST {LEGACY_URL}/api/v1/points/add`.
    Legacy,
}

impl CreditTarget {
    /// As stored in `credit_target`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::PointService => "point_service",
            Self::Legacy => "legacy",
        }
    }
}

impl FromSql<Text, Pg> for CreditTarget {
    fn from_sql(value: PgValue<'_>) -> deserialize::Result<Self> {
        match <String as FromSql<Text, Pg>>::from_sql(value)?.as_str() {
            "point_service" => Ok(Self::PointService),
            "legacy" => Ok(Self::Legacy),
            other => Err(format!("unknown gift-card credit target {other:?}").into()),
        }
    }
}

/// The reference a new redemption of `code` (as stored in `gift_card_codes`) is credited
/// under, on every try.
pub fn reference_of(code: &str) -> String {
    format!("gift-card:{code}")
}

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
    /// Where the credit goes, on every try.
    #[diesel(sql_type = Text, column_name = credit_target)]
    pub target: CreditTarget,
    /// What the credit is known by on the other side, on every try.
    #[diesel(sql_type = Text, column_name = credit_reference)]
    pub reference: String,
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

/// What every update that takes a lease sets `taken_at` to: a later value than it had
/// (`clock_timestamp()`, unless the server's clock was set back behind it). The catalog
/// refuses a take (an update that moves `attempts`) of a row credited under its code that
/// leaves `taken_at` as it was: that is an order service from before references were
/// stored, which would send it again under `gift-card:<id>` (migration
/// `2026-11-27-000060_gift_card_credit_target`). `r` is the row being updated.
const TAKEN_NOW: &str = "GREATEST(clock_timestamp(), r.taken_at + interval '1 microsecond')";

/// How a statement that takes a lease ends: the columns of a [`Lease`].
const RETURNING_LEASE: &str =
    "RETURNING id, client_id, points, attempts AS attempt, credit_target, credit_reference";

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
///
/// A redemption made before targets were stored gets `unrecorded` (where this process
/// credits new redemptions, as every try of it did until now), once and for good.
pub async fn take_due(
    conn: &mut AsyncPgConnection,
    unrecorded: CreditTarget,
    lease: Duration,
) -> QueryResult<Option<Lease>> {
    let statement = diesel::sql_query(format!(
        "UPDATE gift_card_redemptions r \
         SET lease_until = now() + make_interval(secs => $2), attempts = r.attempts + 1, \
             credit_target = COALESCE(r.credit_target, $1), taken_at = {TAKEN_NOW} \
         WHERE r.id = (SELECT id FROM gift_card_redemptions \
                       WHERE status = 'pending' AND next_attempt_at <= now() \
                         AND (lease_until IS NULL OR lease_until <= now()) \
                       ORDER BY next_attempt_at, id LIMIT 1 \
                       FOR UPDATE SKIP LOCKED) \
         {RETURNING_LEASE}"
    ))
    .into_boxed()
    .bind::<Text, _>(unrecorded.as_str());
    take(conn, statement, lease).await
}

/// Takes the lease of a new redemption of `code` (as stored in `gift_card_codes`) by the
/// client, credited to `target` under [`reference_of`] the code for good; `None` when the
/// code already has one (then the caller reads it under a row lock).
pub async fn take_new(
    conn: &mut AsyncPgConnection,
    code: &str,
    client_id: i64,
    points: &BigDecimal,
    target: CreditTarget,
    lease: Duration,
) -> QueryResult<Option<Lease>> {
    let statement = diesel::sql_query(format!(
        "INSERT INTO gift_card_redemptions \
             (code, client_id, points, credit_target, credit_reference, attempts, lease_until, \
              taken_at) \
         VALUES ($1, $2, $3, $4, $5, 1, now() + make_interval(secs => $6), clock_timestamp()) \
         ON CONFLICT (code) DO NOTHING \
         {RETURNING_LEASE}"
    ))
    .into_boxed()
    .bind::<Text, _>(code)
    .bind::<BigInt, _>(client_id)
    .bind::<Numeric, _>(points)
    .bind::<Text, _>(target.as_str())
    .bind::<Text, _>(reference_of(code));
    take(conn, statement, lease).await
}

/// Takes the lease of a pending redemption that the caller has locked and found free;
/// `unrecorded` as in [`take_due`].
pub async fn take_locked(
    conn: &mut AsyncPgConnection,
    id: i64,
    unrecorded: CreditTarget,
    lease: Duration,
) -> QueryResult<Lease> {
    let statement = diesel::sql_query(format!(
        "UPDATE gift_card_redemptions r \
         SET lease_until = now() + make_interval(secs => $3), attempts = r.attempts + 1, \
             credit_target = COALESCE(r.credit_target, $2), taken_at = {TAKEN_NOW} \
         WHERE r.id = $1 \
         {RETURNING_LEASE}"
    ))
    .into_boxed()
    .bind::<BigInt, _>(id)
    .bind::<Text, _>(unrecorded.as_str());
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
    /// The redemption is credited to the legacy system and this process has no
    /// `LEGACY_URL`: nothing was sent (least of all to the point service). Logged at error
    /// level every time; a process with the URL, or this one once it is set, credits it.
    #[error("the credit goes to the legacy system and LEGACY_URL is not set")]
    NoLegacyUrl,
}

/// How long a refused credit waits before its next try by the retry task: a few tries a
/// day, in case the fix was made on the other side, instead of one every few minutes.
pub const REFUSED_BACKOFF: Duration = Duration::from_secs(6 * 3600);

impl Failure {
    /// The wait before the retry task tries the credit again.
    pub fn backoff(&self, retry: &GiftCardRetry, attempt: i32) -> Duration {
        match self {
            Self::Refused(_) => REFUSED_BACKOFF,
            Self::Failed(_) | Self::NoLegacyUrl => retry.backoff(attempt),
        }
    }
}

/// Sends the credit to the lease's target under its reference. `Err` is why it cannot be
/// counted as done.
///
/// The points go as the exact decimal (plain notation, no trailing zeros: `1.23456`), which
/// the point service reads exactly; the spec's 4-decimal text is for answers only, and
/// sending it would credit 1.2346 for 1.23456, or "0" (refused) for 0.00001.
pub async fn send(credit: &Credit, lease: &Lease) -> Result<(), Failure> {
    let reference = &lease.reference;
    let points = domain::decimal::to_number(&lease.points).to_string();
    let request = match lease.target {
        CreditTarget::PointService => credit
            .http
            .post(format!("{}/internal/v1/credits", credit.point_service))
            .header("x-internal-token", credit.internal_token.expose())
            .json(&json!({"client_id": lease.client_id, "points": points, "reference": reference, "reason": "gift_card"})),
        // The legacy side learns the reference twice: in the body, and as the header that
        // HTTP APIs commonly deduplicate retried requests by.
        CreditTarget::Legacy => {
            let Some(url) = &credit.legacy_url else {
                return Err(Failure::NoLegacyUrl);
            };
            credit
                .http
                .post(format!("{url}/api/v1/points/add"))
                .header("idempotency-key", idempotency_key(reference))
                .json(&json!({"client_id": lease.client_id, "points": points, "reference": reference}))
        }
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

/// The reference as an `Idempotency-Key` value: as is, except that bytes a header value
/// cannot carry (a code may hold spaces or non-ASCII letters) and `%` itself are
/// percent-encoded, so every code has one key, the same on every try. Left as it was, such a
/// reference would fail every try before it was sent.
fn idempotency_key(reference: &str) -> String {
    let mut key = String::with_capacity(reference.len());
    for byte in reference.bytes() {
        if byte.is_ascii_graphic() && byte != b'%' {
            key.push(char::from(byte));
        } else {
            key.push_str(&format!("%{byte:02X}"));
        }
    }
    key
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
                credit.target = lease.target.as_str(),
                credit.reference = %lease.reference,
                attempt = lease.attempt,
                by = by_label,
                "gift-card credit landed"
            );
        }
        Err(error) => {
            let outcome = match error {
                Failure::Refused(_) => "refused",
                Failure::Failed(_) => "failed",
                Failure::NoLegacyUrl => "unconfigured",
            };
            metrics::counter!("gift_card_credit_attempts_total", "by" => by_label, "outcome" => outcome)
                .increment(1);
            let next_in = error.backoff(retry, lease.attempt).as_secs_f64();
            if matches!(error, Failure::Refused(_)) {
                tracing::error!(
                    redemption.id = lease.id,
                    client.id = lease.client_id,
                    credit.target = lease.target.as_str(),
                    credit.reference = %lease.reference,
                    points = %lease.points,
                    attempt = lease.attempt,
                    by = by_label,
                    next_try_in_seconds = next_in,
                    error.message = %error,
                    "gift-card credit refused: it stays pending and is retried rarely; look at why the other side refuses it"
                );
            } else if matches!(error, Failure::NoLegacyUrl) {
                tracing::error!(
                    redemption.id = lease.id,
                    client.id = lease.client_id,
                    credit.target = lease.target.as_str(),
                    credit.reference = %lease.reference,
                    points = %lease.points,
                    attempt = lease.attempt,
                    by = by_label,
                    next_try_in_seconds = next_in,
                    error.message = %error,
                    "gift-card credit not sent: it was made for the legacy system, which only a process with LEGACY_URL can credit; it stays pending and is retried (never sent to the point service instead); set LEGACY_URL"
                );
            } else {
                // One line at either level (a tracing level is fixed where the line is written).
                macro_rules! failed {
                    ($level:ident, $message:literal) => {
                        tracing::$level!(
                            redemption.id = lease.id,
                            client.id = lease.client_id,
                            credit.target = lease.target.as_str(),
                            credit.reference = %lease.reference,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_idempotency_key_is_the_reference_with_what_a_header_cannot_carry_encoded() {
        assert_eq!(
            idempotency_key("gift-card:WELCOME-100"),
            "gift-card:WELCOME-100"
        );
        assert_eq!(idempotency_key("gift-card:17"), "gift-card:17");
        assert_eq!(
            idempotency_key("gift-card:عيد 100%"),
            "gift-card:%D8%B9%D9%8A%D8%AF%20100%25"
        );
        for key in ["gift-card:عيد 100%", "gift-card:a\tb"].map(idempotency_key) {
            assert!(http::HeaderValue::from_str(&key).is_ok(), "{key}");
        }
    }
}
