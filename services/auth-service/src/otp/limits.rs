//! The login routes' rate limits: SMS sent and codes tried per phone and per client address,
//! and phones with no account asked for per address, counted as events in the database
//! over a rolling hour.

use chrono::{Duration, Utc};
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Integer, Nullable, Text};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use envelope::RetryAfter;

use super::OtpSettings;
use crate::db::schema::otp_events;
use crate::error::AuthError;

const WINDOW: &str = "1 hour";

/// The event kind of a phone with no account.
const UNKNOWN_PHONE: &str = "unknown_phone";

envelope::refusals! {
    /// Why the login routes refuse a request that breaks a limit.
    pub enum OtpLimit in A {
        /// Too many SMS or tries for the phone or the address, or too many phones with no
        /// account from the address.
        TooManyAttempts => 429, "Too many attempts, try again later";
    }
}

/// The rate limits, per rolling hour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub sms_per_phone: i64,
    pub sms_per_ip: i64,
    pub tries_per_phone: i64,
    pub tries_per_ip: i64,
    /// Phones with no account asked for (reset-otp or verify-otp) from one address.
    pub unknown_phones_per_ip: i64,
}

/// Events of one kind in the window, for a phone and for an address, and for each the whole
/// seconds until the event that holds the count at its limit leaves the window (none while
/// the count is below the limit).
#[derive(QueryableByName)]
pub(super) struct Counts {
    #[diesel(sql_type = BigInt)]
    by_phone: i64,
    #[diesel(sql_type = BigInt)]
    by_ip: i64,
    #[diesel(sql_type = Nullable<BigInt>)]
    phone_frees_in: Option<i64>,
    #[diesel(sql_type = Nullable<BigInt>)]
    ip_frees_in: Option<i64>,
}

impl Counts {
    /// The 429 when the phone or the address is at its limit, with the wait until both
    /// would let the request through, made where the caller refuses.
    #[track_caller]
    pub(super) fn refusal(&self, per_phone: i64, per_ip: i64) -> Option<AuthError> {
        let phone = (self.by_phone >= per_phone).then_some(self.phone_frees_in.unwrap_or(0));
        let ip = (self.by_ip >= per_ip).then_some(self.ip_frees_in.unwrap_or(0));
        let wait = phone.max(ip)?;
        Some(AuthError::limited(
            OtpLimit::TooManyAttempts,
            RetryAfter::seconds(Some(wait)),
        ))
    }
}

/// The SQL of the seconds until the `limit`-th newest event of those `filter` picks leaves
/// the window: the moment a count at the limit drops below it.
fn frees_in(filter: &str, limit: &str) -> String {
    format!(
        "ceil(extract(epoch FROM (array_agg(created_at ORDER BY created_at DESC) \
         FILTER (WHERE {filter}))[{limit}] + interval '{WINDOW}' - now()))::bigint"
    )
}

/// Serialises the requests counting events of `kind` for one address until the transaction
/// ends, so that concurrent ones (on any replica) cannot all pass the count together.
async fn lock_address(conn: &mut AsyncPgConnection, kind: &str, ip: &str) -> QueryResult<()> {
    diesel::sql_query("SELECT pg_advisory_xact_lock(hashtext('otp:' || $1 || ':' || $2)::bigint)")
        .bind::<Text, _>(kind)
        .bind::<Text, _>(ip)
        .execute(conn)
        .await
        .map(|_| ())
}

/// Events of `kind` in the last hour for this phone and this address, under
/// [`lock_address`], with their waits at limits `per_phone` and `per_ip`.
pub(super) async fn recent(
    conn: &mut AsyncPgConnection,
    kind: &str,
    phone: &str,
    ip: &str,
    per_phone: i64,
    per_ip: i64,
) -> QueryResult<Counts> {
    lock_address(conn, kind, ip).await?;
    diesel::sql_query(format!(
        "SELECT count(*) FILTER (WHERE phone = $2) AS by_phone, \
         count(*) FILTER (WHERE ip = $3) AS by_ip, \
         {} AS phone_frees_in, {} AS ip_frees_in \
         FROM otp_events WHERE kind = $1 AND created_at > now() - interval '{WINDOW}' \
         AND (phone = $2 OR ip = $3)",
        frees_in("phone = $2", "$4"),
        frees_in("ip = $3", "$5"),
    ))
    .bind::<Text, _>(kind)
    .bind::<Text, _>(phone)
    .bind::<Text, _>(ip)
    .bind::<Integer, _>(as_index(per_phone))
    .bind::<Integer, _>(as_index(per_ip))
    .get_result(conn)
    .await
}

/// A limit as an SQL array index (limits are far below `i32::MAX`).
fn as_index(limit: i64) -> i32 {
    i32::try_from(limit).unwrap_or(i32::MAX)
}

/// Unknown phones asked for from this address in the last hour: the 429 once they reach
/// the limit, with the wait until they drop below it.
async fn unknown_phones_refusal(
    conn: &mut AsyncPgConnection,
    settings: &OtpSettings,
    ip: &str,
) -> QueryResult<Option<AuthError>> {
    let counts: Counts = diesel::sql_query(format!(
        "SELECT 0::bigint AS by_phone, count(*) AS by_ip, NULL::bigint AS phone_frees_in, \
         {} AS ip_frees_in \
         FROM otp_events WHERE kind = $1 AND ip = $2 AND created_at > now() - interval '{WINDOW}'",
        frees_in("true", "$3"),
    ))
    .bind::<Text, _>(UNKNOWN_PHONE)
    .bind::<Text, _>(ip)
    .bind::<Integer, _>(as_index(settings.limits.unknown_phones_per_ip))
    .get_result(conn)
    .await?;
    Ok(counts.refusal(i64::MAX, settings.limits.unknown_phones_per_ip))
}

/// The answer to a phone with no account: `answer` while the address is under its limit,
/// counted under the address's lock, else the 429. The count is written in the caller's
/// transaction, which commits it with the refusal.
pub(super) async fn refuse_unknown_phone(
    conn: &mut AsyncPgConnection,
    settings: &OtpSettings,
    ip: &str,
    answer: AuthError,
) -> QueryResult<AuthError> {
    lock_address(conn, UNKNOWN_PHONE, ip).await?;
    if let Some(refused) = unknown_phones_refusal(conn, settings, ip).await? {
        return Ok(refused);
    }
    // No phone kept: the limit is the address's, and numbers of people who are not clients
    // are none of our business.
    record(conn, UNKNOWN_PHONE, "", ip).await?;
    Ok(answer)
}

/// The 429 when this address is past its unknown-phone limit. Read without the lock: a
/// known phone adds nothing to the count, so there is nothing to overshoot.
pub(super) async fn address_blocked(
    conn: &mut AsyncPgConnection,
    settings: &OtpSettings,
    ip: &str,
) -> QueryResult<Option<AuthError>> {
    unknown_phones_refusal(conn, settings, ip).await
}

/// Records one event and returns its id.
pub(super) async fn record(
    conn: &mut AsyncPgConnection,
    kind: &str,
    phone: &str,
    ip: &str,
) -> QueryResult<i64> {
    let id = diesel::insert_into(otp_events::table)
        .values((
            otp_events::kind.eq(kind),
            otp_events::phone.eq(phone),
            otp_events::ip.eq(ip),
        ))
        .returning(otp_events::id)
        .get_result(conn)
        .await?;
    diesel::delete(
        otp_events::table.filter(otp_events::created_at.lt(Utc::now() - Duration::days(1))),
    )
    .execute(conn)
    .await?;
    Ok(id)
}
