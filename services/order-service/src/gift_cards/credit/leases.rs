//! A redemption's lease: taken in one short statement (a new redemption, the most overdue
//! one, or one the caller has locked), given back when the credit failed, and the credit
//! written down when it landed.

use std::time::Duration;

use bigdecimal::BigDecimal;
use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::query_builder::{BoxedSqlQuery, SqlQuery};
use diesel::sql_types::{BigInt, Double, Integer, Nullable, Numeric, Text};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};

use catalog_db::RedemptionStatus;

use super::{CreditTarget, Failure, Lease, reference_of};

/// A duration as the seconds that `make_interval(secs => …)` takes.
fn seconds(d: Duration) -> f64 {
    d.as_secs_f64()
}

/// The words of the two statuses, as the statements below compare and write them.
const PENDING: &str = RedemptionStatus::Pending.as_str();
const CREDITED: &str = RedemptionStatus::Credited.as_str();

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
                       WHERE status = '{PENDING}' AND next_attempt_at <= now() \
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
        diesel::sql_query(format!(
            "UPDATE gift_card_redemptions \
             SET status = '{CREDITED}', credited_at = COALESCE(credited_at, now()), \
                 lease_until = NULL, last_error = NULL, \
                 answered_at = CASE WHEN $2 THEN now() ELSE answered_at END \
             WHERE id = $1",
        ))
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
    diesel::sql_query(format!(
        "UPDATE gift_card_redemptions \
         SET lease_until = NULL, next_attempt_at = now() + make_interval(secs => $3), \
             last_error = $4 \
         WHERE id = $1 AND attempts = $2 AND status = '{PENDING}'",
    ))
    .bind::<BigInt, _>(lease.id)
    .bind::<Integer, _>(lease.attempt)
    .bind::<Double, _>(seconds(backoff))
    .bind::<Nullable<Text>, _>(Some(error.to_string()))
    .execute(conn)
    .await?;
    Ok(())
}
