//! reset-otp: a code is issued, stored, then sent, and its send confirmed or undone.

use chrono::Duration;
use diesel::prelude::*;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use rand::Rng;

use super::limits::{address_blocked, recent, record, refuse_unknown_phone};
use super::{CODE_LIFETIME, MAX_WRONG_TRIES, OtpSettings, lock_client, now};
use crate::caller::AccessRefusal;
use crate::db::schema::{otp_codes, otp_events};
use crate::error::AuthError;
use crate::profile::Profile;
use crate::tokens::TokenKeys;

envelope::refusals! {
    /// Why reset-otp refuses, besides its limit and an inactive account.
    pub enum ResetRefusal in A {
        /// No account has this phone: the legacy system's sign-up validation leaking
        /// through, which clients depend on.
        UnknownPhone => 400, "Last Name cannot be blank.";
    }
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
            let unknown = ResetRefusal::UnknownPhone.into();
            return Ok(Err(refuse_unknown_phone(conn, settings, ip, unknown).await?));
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
        return Err(AccessRefusal::Unauthorized.into());
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
