//! Login by SMS code: the rules of reset-otp and verify-otp (no HTTP in here).
//!
//! - A code lives 3 minutes, by the database's clock ([`crate::clock`]): live up to the last
//!   instant before `issued + 3 min`, dead from then on. While one is live, reset-otp sends
//!   nothing and still succeeds.
//! - Test-mode accounts get the fixed `OTP_TEST_CODE` and no SMS; without one (production
//!   with no value in the Secret) they get no code and cannot log in.
//! - The code is committed before its SMS goes out (no transaction or pooled connection
//!   waits on the gateway). A failed send deletes it and the send it counted, so the client
//!   can ask again at once; until a send is confirmed the code counts as live only for
//!   [`OtpSettings::pending_for`] (as long as a send can take), so a crash between the
//!   commit and the send does not block reset-otp for the code's 3 minutes either.
//! - A code dies after 5 wrong tries: it no longer verifies, even when right, and the next
//!   reset-otp sends a new one.
//! - Rate limits count SMS actually sent and codes actually tried, per phone and per client
//!   address, in the database (shared by all replicas). A reset-otp while a code is live
//!   counts as nothing, so it never becomes a 429.
//! - Phones with no account are counted per client address on both routes (their answer,
//!   reset-otp's `Last Name cannot be blank.`, says who is not a client, so without a limit
//!   anyone could test every number). Past [`Limits::unknown_phones_per_ip`] an address gets
//!   the 429 for every phone, known ones included, so the answers stop telling them apart.

use chrono::{DateTime, Duration, Utc};
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Integer, Nullable, Text, Timestamptz};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use rand::Rng;

use envelope::RetryAfter;

use crate::clock::Clock;
use crate::db::schema::{clients, otp_codes, otp_events};
use crate::error::{AuthError, Fault};
use crate::profile::Profile;
use crate::tokens::TokenKeys;
use server::Secret;

pub const CODE_LIFETIME: Duration = Duration::minutes(3);
pub const MAX_WRONG_TRIES: i32 = 5;
const WINDOW: &str = "1 hour";

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

#[derive(Debug, Clone)]
pub struct OtpSettings {
    /// `None`: test-mode accounts get no code.
    pub test_code: Option<Secret>,
    pub limits: Limits,
    /// How long a stored code whose SMS is not confirmed yet counts as live: the SMS
    /// timeout and a margin. Past it, the send is taken as lost and reset-otp sends again.
    pub pending_for: std::time::Duration,
    /// The clock of the codes' times: the database's, or a test's.
    pub clock: Clock,
}

/// What reset-otp decided, once its transaction has committed.
#[derive(Debug, PartialEq, Eq)]
pub enum Reset {
    /// A live code exists: nothing to send.
    AlreadyLive,
    /// A test-mode account: the fixed code is live, nothing to send.
    TestMode,
    /// A test-mode account while no test code is configured: nothing stored, nothing sent.
    TestModeWithoutCode,
    /// Send this code to this phone; then [`confirm_sent`] or, if the send failed,
    /// [`undo_send`].
    Send(Pending),
}

/// A stored code whose SMS has not gone out yet, and the send it counted.
#[derive(Debug, PartialEq, Eq)]
pub struct Pending {
    pub client_id: i64,
    pub phone: String,
    pub code: String,
    code_hash: Vec<u8>,
    event_id: i64,
}

/// The phone as the accounts hold it. A `+` sent unencoded in a query string arrives as a
/// space, so a number of digits only gets its `+` back.
pub fn normalize_phone(raw: &str) -> String {
    let phone = domain::Phone::strip_whitespace(raw);
    if !phone.is_empty() && phone.bytes().all(|b| b.is_ascii_digit()) {
        format!("+{phone}")
    } else {
        phone
    }
}

#[derive(QueryableByName)]
struct Now {
    #[diesel(sql_type = Timestamptz)]
    now: DateTime<Utc>,
}

/// Now by the codes' clock. The database's `now()` is the start of the caller's transaction,
/// the same instant for every statement in it.
async fn now(conn: &mut AsyncPgConnection, clock: &Clock) -> QueryResult<DateTime<Utc>> {
    match clock.fixed() {
        Some(at) => Ok(at),
        None => Ok(diesel::sql_query("SELECT now() AS now")
            .get_result::<Now>(conn)
            .await?
            .now),
    }
}

/// Events of one kind in the window, for a phone and for an address, and for each the whole
/// seconds until the event that holds the count at its limit leaves the window (none while
/// the count is below the limit).
#[derive(QueryableByName)]
struct Counts {
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
    fn refusal(&self, per_phone: i64, per_ip: i64) -> Option<AuthError> {
        let phone = (self.by_phone >= per_phone).then_some(self.phone_frees_in.unwrap_or(0));
        let ip = (self.by_ip >= per_ip).then_some(self.ip_frees_in.unwrap_or(0));
        let wait = phone.max(ip)?;
        Some(Fault::TooManyRequests(RetryAfter::seconds(Some(wait))).into())
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
async fn recent(
    conn: &mut AsyncPgConnection,
    kind: &str,
    phone: &str,
    ip: &str,
    per_phone: i64,
    per_ip: i64,
) -> QueryResult<Counts> {
    lock_address(conn, kind, ip).await?;
    diesel::sql_query(format!(
        "SELECT count(*) FILTER (WHERE phone = $2) AS by_phone, count(*) FILTER (WHERE ip = $3) AS by_ip, \
         {} AS phone_frees_in, {} AS ip_frees_in \
         FROM otp_events WHERE kind = $1 AND created_at > now() - interval '{WINDOW}' AND (phone = $2 OR ip = $3)",
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

const UNKNOWN_PHONE: &str = "unknown_phone";

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
async fn refuse_unknown_phone(
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
async fn address_blocked(
    conn: &mut AsyncPgConnection,
    settings: &OtpSettings,
    ip: &str,
) -> QueryResult<Option<AuthError>> {
    unknown_phones_refusal(conn, settings, ip).await
}

/// Records one event and returns its id.
async fn record(
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

/// The account of a phone, locked for the rest of the transaction so that two requests
/// for one phone take turns.
async fn lock_client(
    conn: &mut AsyncPgConnection,
    phone: &str,
) -> QueryResult<Option<(Profile, bool)>> {
    clients::table
        .filter(clients::contact_phone.eq(phone))
        .select((Profile::as_select(), clients::test_mode))
        .for_update()
        .first(conn)
        .await
        .optional()
}

/// reset-otp's rule. Commits before returning; the caller gives its connection back, sends
/// the SMS, then calls [`confirm_sent`] or [`undo_send`] on a connection taken afresh.
pub async fn reset(
    conn: &mut AsyncPgConnection,
    keys: &TokenKeys,
    settings: &OtpSettings,
    phone: &str,
    ip: &str,
) -> Result<Reset, AuthError> {
    // The outer error rolls back; the inner one is an answer committed with what it counted.
    conn.transaction::<Result<Reset, AuthError>, AuthError, _>(async |conn| {
        let Some((client, test_mode)) = lock_client(conn, phone).await? else {
            return Ok(Err(refuse_unknown_phone(
                conn,
                settings,
                ip,
                Fault::UnknownPhone.into(),
            )
            .await?));
        };
        if let Some(refused) = address_blocked(conn, settings, ip).await? {
            return Ok(Err(refused));
        }
        reset_known(conn, keys, settings, client, test_mode, phone, ip)
            .await
            .map(Ok)
    })
    .await?
}

/// reset-otp for an account, inside [`reset`]'s transaction.
async fn reset_known(
    conn: &mut AsyncPgConnection,
    keys: &TokenKeys,
    settings: &OtpSettings,
    client: Profile,
    test_mode: bool,
    phone: &str,
    ip: &str,
) -> Result<Reset, AuthError> {
    if !client.is_active() {
        return Err(Fault::Unauthorized.into());
    }
    let now = now(conn, &settings.clock).await?;
    let send_deadline = now - Duration::from_std(settings.pending_for).unwrap_or(CODE_LIFETIME);
    let live: i64 = otp_codes::table
        .filter(otp_codes::client_id.eq(client.client_id))
        .filter(otp_codes::expires_at.gt(now))
        .filter(otp_codes::failed_attempts.lt(MAX_WRONG_TRIES))
        .filter(
            otp_codes::sent_at
                .is_not_null()
                .or(otp_codes::created_at.gt(send_deadline)),
        )
        .count()
        .get_result(conn)
        .await?;
    if live > 0 {
        return Ok(Reset::AlreadyLive);
    }
    let code = if test_mode {
        match &settings.test_code {
            Some(code) => code.expose().to_owned(),
            None => return Ok(Reset::TestModeWithoutCode),
        }
    } else {
        let (per_phone, per_ip) = (settings.limits.sms_per_phone, settings.limits.sms_per_ip);
        let counts = recent(conn, "sms_sent", phone, ip, per_phone, per_ip).await?;
        if let Some(refused) = counts.refusal(per_phone, per_ip) {
            return Err(refused);
        }
        format!("{:04}", rand::rng().random_range(0..10_000))
    };
    let code_hash = keys.code_hash(client.client_id, &code);
    let values = (
        otp_codes::client_id.eq(client.client_id),
        otp_codes::code_hash.eq(code_hash.clone()),
        otp_codes::expires_at.eq(now + CODE_LIFETIME),
        otp_codes::failed_attempts.eq(0),
        otp_codes::created_at.eq(now),
        // A test-mode code is never sent: it is live at once.
        otp_codes::sent_at.eq(test_mode.then_some(now)),
    );
    diesel::insert_into(otp_codes::table)
        .values(values.clone())
        .on_conflict(otp_codes::client_id)
        .do_update()
        .set(values)
        .execute(conn)
        .await?;
    if test_mode {
        return Ok(Reset::TestMode);
    }
    // Counted now, under the lock, so that a burst cannot overshoot; a failed send
    // takes it back.
    let event_id = record(conn, "sms_sent", phone, ip).await?;
    Ok(Reset::Send(Pending {
        client_id: client.client_id,
        phone: phone.to_owned(),
        code,
        code_hash,
        event_id,
    }))
}

/// The SMS went out: the code is live for the rest of its 3 minutes.
pub async fn confirm_sent(
    conn: &mut AsyncPgConnection,
    settings: &OtpSettings,
    pending: &Pending,
) -> QueryResult<()> {
    let now = now(conn, &settings.clock).await?;
    diesel::update(
        otp_codes::table
            .find(pending.client_id)
            .filter(otp_codes::code_hash.eq(&pending.code_hash)),
    )
    .set(otp_codes::sent_at.eq(now))
    .execute(conn)
    .await
    .map(|_| ())
}

/// Forgets a code whose SMS could not be sent, and the send it counted, so the client can
/// ask again at once (and the limits count only SMS actually sent). Only this request's
/// code and event go: a code that another request stored since is left alone.
pub async fn undo_send(conn: &mut AsyncPgConnection, pending: &Pending) -> QueryResult<()> {
    conn.transaction(async |conn| {
        diesel::delete(
            otp_codes::table
                .find(pending.client_id)
                .filter(otp_codes::code_hash.eq(&pending.code_hash))
                .filter(otp_codes::sent_at.is_null()),
        )
        .execute(conn)
        .await?;
        diesel::delete(otp_events::table.find(pending.event_id))
            .execute(conn)
            .await?;
        Ok(())
    })
    .await
}

/// What verify-otp decided; wrong tries are committed even though the answer is an error.
enum Verdict {
    Accepted(Profile),
    Refused(AuthError),
}

/// verify-otp's rule: the client whose live code this is, or why not.
pub async fn verify(
    conn: &mut AsyncPgConnection,
    keys: &TokenKeys,
    settings: &OtpSettings,
    phone: &str,
    code: &str,
    ip: &str,
) -> Result<Profile, AuthError> {
    let verdict = conn
        .transaction::<_, AuthError, _>(async |conn| {
            let Some((client, test_mode)) = lock_client(conn, phone).await? else {
                return Ok(Verdict::Refused(
                    refuse_unknown_phone(conn, settings, ip, Fault::WrongCode.into()).await?,
                ));
            };
            if let Some(refused) = address_blocked(conn, settings, ip).await? {
                return Ok(Verdict::Refused(refused));
            }
            if !client.is_active() {
                return Ok(Verdict::Refused(Fault::Unauthorized.into()));
            }
            let (per_phone, per_ip) = (
                settings.limits.tries_per_phone,
                settings.limits.tries_per_ip,
            );
            let counts = recent(conn, "code_tried", phone, ip, per_phone, per_ip).await?;
            if let Some(refused) = counts.refusal(per_phone, per_ip) {
                return Ok(Verdict::Refused(refused));
            }
            record(conn, "code_tried", phone, ip).await?;
            if test_mode && settings.test_code.is_none() {
                // No test code configured: a code stored before that cannot open it either.
                return Ok(Verdict::Refused(Fault::WrongCode.into()));
            }
            let now = now(conn, &settings.clock).await?;
            let stored = otp_codes::table
                .find(client.client_id)
                .filter(otp_codes::expires_at.gt(now))
                .select((otp_codes::code_hash, otp_codes::failed_attempts))
                .for_update()
                .first::<(Vec<u8>, i32)>(conn)
                .await
                .optional()?;
            let Some((hash, failed)) = stored else {
                return Ok(Verdict::Refused(Fault::WrongCode.into()));
            };
            if failed >= MAX_WRONG_TRIES {
                return Ok(Verdict::Refused(Fault::WrongCode.into()));
            }
            if keys.code_matches(client.client_id, code, &hash) {
                // A code is good for one login.
                diesel::delete(otp_codes::table.find(client.client_id))
                    .execute(conn)
                    .await?;
                Ok(Verdict::Accepted(client))
            } else {
                diesel::update(otp_codes::table.find(client.client_id))
                    .set(otp_codes::failed_attempts.eq(otp_codes::failed_attempts + 1))
                    .execute(conn)
                    .await?;
                Ok(Verdict::Refused(Fault::WrongCode.into()))
            }
        })
        .await?;
    match verdict {
        Verdict::Accepted(profile) => Ok(profile),
        Verdict::Refused(error) => Err(error),
    }
}

#[cfg(test)]
mod tests {
    use super::normalize_phone;

    #[test]
    fn a_lost_plus_comes_back() {
        assert_eq!(normalize_phone(" 966500000001"), "+966500000001");
        assert_eq!(normalize_phone("+966 500 000 001"), "+966500000001");
        assert_eq!(normalize_phone("abc"), "abc");
        assert_eq!(normalize_phone(""), "");
    }
}
