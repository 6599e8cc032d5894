//! Login by SMS code: the rules of reset-otp and verify-otp (no HTTP in here).
//!
//! - A code lives 3 minutes. While one is live, reset-otp sends nothing and still succeeds.
//! - Test-mode accounts get the fixed `OTP_TEST_CODE` and no SMS.
//! - A code dies after 5 wrong tries: it no longer verifies, even when right, and the next
//!   reset-otp sends a new one.
//! - Rate limits count SMS actually sent and codes actually tried, per phone and per client
//!   address, in the database (shared by all replicas). A reset-otp while a code is live
//!   counts as nothing, so it never becomes a 429.

use chrono::{Duration, Utc};
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Text};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use rand::Rng;

use crate::db::schema::{clients, otp_codes, otp_events};
use crate::error::AuthError;
use crate::profile::Profile;
use crate::tokens::TokenKeys;

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
}

#[derive(Debug, Clone)]
pub struct OtpSettings {
    pub test_code: String,
    pub limits: Limits,
}

/// What reset-otp decided, once its transaction has committed.
#[derive(Debug, PartialEq, Eq)]
pub enum Reset {
    /// A live code exists: nothing to send.
    AlreadyLive,
    /// A test-mode account: the fixed code is live, nothing to send.
    TestMode,
    /// Send this code to this phone (the send is recorded; undo it with [`undo_send`]).
    Send {
        client_id: i64,
        phone: String,
        code: String,
    },
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
struct Counts {
    #[diesel(sql_type = BigInt)]
    by_phone: i64,
    #[diesel(sql_type = BigInt)]
    by_ip: i64,
}

/// Events of `kind` in the last hour for this phone and this address. The advisory lock
/// serialises concurrent requests from one address until the transaction ends, so that
/// they cannot all pass the count together.
async fn recent(
    conn: &mut AsyncPgConnection,
    kind: &str,
    phone: &str,
    ip: &str,
) -> QueryResult<Counts> {
    diesel::sql_query("SELECT pg_advisory_xact_lock(hashtext('otp:' || $1 || ':' || $2)::bigint)")
        .bind::<Text, _>(kind)
        .bind::<Text, _>(ip)
        .execute(conn)
        .await?;
    diesel::sql_query(format!(
        "SELECT count(*) FILTER (WHERE phone = $2) AS by_phone, count(*) FILTER (WHERE ip = $3) AS by_ip \
         FROM otp_events WHERE kind = $1 AND created_at > now() - interval '{WINDOW}' AND (phone = $2 OR ip = $3)"
    ))
    .bind::<Text, _>(kind)
    .bind::<Text, _>(phone)
    .bind::<Text, _>(ip)
    .get_result(conn)
    .await
}

async fn record(
    conn: &mut AsyncPgConnection,
    kind: &str,
    phone: &str,
    ip: &str,
) -> QueryResult<()> {
    diesel::insert_into(otp_events::table)
        .values((
            otp_events::kind.eq(kind),
            otp_events::phone.eq(phone),
            otp_events::ip.eq(ip),
        ))
        .execute(conn)
        .await?;
    diesel::delete(
        otp_events::table.filter(otp_events::created_at.lt(Utc::now() - Duration::days(1))),
    )
    .execute(conn)
    .await?;
    Ok(())
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

/// reset-otp's rule. Commits before returning; the caller sends the SMS after the commit
/// (never holding a transaction across an HTTP call) and calls [`undo_send`] if it fails.
pub async fn reset(
    conn: &mut AsyncPgConnection,
    keys: &TokenKeys,
    settings: &OtpSettings,
    phone: &str,
    ip: &str,
) -> Result<Reset, AuthError> {
    conn.transaction::<_, AuthError, _>(async |conn| {
        let (client, test_mode) = lock_client(conn, phone)
            .await?
            .ok_or(AuthError::UnknownPhone)?;
        if !client.is_active() {
            return Err(AuthError::Unauthorized);
        }
        let live: i64 = otp_codes::table
            .filter(otp_codes::client_id.eq(client.client_id))
            .filter(otp_codes::expires_at.gt(diesel::dsl::now))
            .filter(otp_codes::failed_attempts.lt(MAX_WRONG_TRIES))
            .count()
            .get_result(conn)
            .await?;
        if live > 0 {
            return Ok(Reset::AlreadyLive);
        }
        let code = if test_mode {
            settings.test_code.clone()
        } else {
            let counts = recent(conn, "sms_sent", phone, ip).await?;
            if counts.by_phone >= settings.limits.sms_per_phone
                || counts.by_ip >= settings.limits.sms_per_ip
            {
                return Err(AuthError::TooManyRequests);
            }
            format!("{:04}", rand::rng().random_range(0..10_000))
        };
        let values = (
            otp_codes::client_id.eq(client.client_id),
            otp_codes::code_hash.eq(keys.code_hash(client.client_id, &code)),
            otp_codes::expires_at.eq(Utc::now() + CODE_LIFETIME),
            otp_codes::failed_attempts.eq(0),
            otp_codes::created_at.eq(Utc::now()),
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
        record(conn, "sms_sent", phone, ip).await?;
        Ok(Reset::Send {
            client_id: client.client_id,
            phone: phone.to_owned(),
            code,
        })
    })
    .await
}

/// Forgets a code whose SMS could not be sent, and the send it counted, so the client
/// can ask again at once.
pub async fn undo_send(
    conn: &mut AsyncPgConnection,
    client_id: i64,
    phone: &str,
    ip: &str,
) -> QueryResult<()> {
    conn.transaction(async |conn| {
        diesel::delete(otp_codes::table.find(client_id))
            .execute(conn)
            .await?;
        let newest = otp_events::table
            .filter(otp_events::kind.eq("sms_sent"))
            .filter(otp_events::phone.eq(phone))
            .filter(otp_events::ip.eq(ip))
            .select(diesel::dsl::max(otp_events::id))
            .first::<Option<i64>>(conn)
            .await?;
        if let Some(id) = newest {
            diesel::delete(otp_events::table.find(id))
                .execute(conn)
                .await?;
        }
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
            let Some((client, _)) = lock_client(conn, phone).await? else {
                return Ok(Verdict::Refused(AuthError::WrongCode));
            };
            if !client.is_active() {
                return Ok(Verdict::Refused(AuthError::Unauthorized));
            }
            let counts = recent(conn, "code_tried", phone, ip).await?;
            if counts.by_phone >= settings.limits.tries_per_phone
                || counts.by_ip >= settings.limits.tries_per_ip
            {
                return Ok(Verdict::Refused(AuthError::TooManyRequests));
            }
            record(conn, "code_tried", phone, ip).await?;
            let stored = otp_codes::table
                .find(client.client_id)
                .filter(otp_codes::expires_at.gt(diesel::dsl::now))
                .select((otp_codes::code_hash, otp_codes::failed_attempts))
                .for_update()
                .first::<(Vec<u8>, i32)>(conn)
                .await
                .optional()?;
            let Some((hash, failed)) = stored else {
                return Ok(Verdict::Refused(AuthError::WrongCode));
            };
            if failed >= MAX_WRONG_TRIES {
                return Ok(Verdict::Refused(AuthError::WrongCode));
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
                Ok(Verdict::Refused(AuthError::WrongCode))
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
