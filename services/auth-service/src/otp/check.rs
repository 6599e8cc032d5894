//! verify-otp: a code tried against the live one; a right one is traded for the account.

use diesel::prelude::*;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};

use super::limits::{address_blocked, recent, record, refuse_unknown_phone};
use super::{MAX_WRONG_TRIES, OtpSettings, lock_client, now};
use crate::caller::AccessRefusal;
use crate::db::schema::otp_codes;
use crate::error::AuthError;
use crate::profile::Profile;
use crate::tokens::TokenKeys;

envelope::refusals! {
    /// Why verify-otp refuses, besides a missing phone, its limit and an inactive account.
    pub enum VerifyRefusal in A {
        /// No code sent, or a blank one.
        CodeMissing => 400, "code is required";
        /// No live code for the phone (none sent, expired, or dead after
        /// [`MAX_WRONG_TRIES`]), a wrong one, or a phone with no account.
        WrongCode => 400, "Invalid or expired code";
    }
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
                let wrong = VerifyRefusal::WrongCode.into();
                return Ok(Verdict::Refused(
                    refuse_unknown_phone(conn, settings, ip, wrong).await?,
                ));
            };
            if let Some(refused) = address_blocked(conn, settings, ip).await? {
                return Ok(Verdict::Refused(refused));
            }
            if !client.is_active() {
                return Ok(Verdict::Refused(AccessRefusal::Unauthorized.into()));
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
                return Ok(Verdict::Refused(VerifyRefusal::WrongCode.into()));
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
                return Ok(Verdict::Refused(VerifyRefusal::WrongCode.into()));
            };
            if failed >= MAX_WRONG_TRIES {
                return Ok(Verdict::Refused(VerifyRefusal::WrongCode.into()));
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
                Ok(Verdict::Refused(VerifyRefusal::WrongCode.into()))
            }
        })
        .await?;
    match verdict {
        Verdict::Accepted(profile) => Ok(profile),
        Verdict::Refused(error) => Err(error),
    }
}
