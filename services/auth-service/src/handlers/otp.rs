//! `GET /api/v1/clients/reset-otp` and `GET /api/v1/clients/verify-otp`.

use actix_web::{HttpRequest, HttpResponse, web};
use serde::{Deserialize, Serialize};

use crate::error::{AuthError, DatabaseAnswers, Fault};
use crate::otp::{self, Pending, Reset, normalize_phone};
use crate::profile::{Profile, Wrapped};
use crate::sms::code_message;
use crate::state::AppState;
use server::client_ip;

#[derive(Deserialize)]
pub struct ResetQuery {
    contact_phone: Option<String>,
}

#[derive(Deserialize)]
pub struct VerifyQuery {
    contact_phone: Option<String>,
    code: Option<String>,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct Login {
    access_token: String,
    profile: Profile,
}

/// The answer to reset-otp.
#[derive(Serialize, utoipa::ToSchema)]
pub struct Sent {
    /// Always true.
    status: bool,
}

/// Sends a login code unless one is live. Always `{status: true}` when it succeeds.
#[utoipa::path(get, path = "/clients/reset-otp", tag = "login",
    params(("contact_phone" = String, Query, description = "with its leading + (a + lost in the query string is restored)", example = "+966500000001")),
    responses(DatabaseAnswers,
        (status = 200, description = "a code was sent, or one is still live (nothing sent)", body = Sent),
        (status = 400, description = "`Last Name cannot be blank.`: no account has this phone (counted per client address, see 429); `Invalid query: …` when a key is sent twice", body = envelope::ErrorA),
        (status = 401, description = "the account is inactive", body = envelope::ErrorA),
        (status = 429, description = "`Too many attempts, try again later`: too many SMS for this phone or client address in the last hour, or this address asked for more phones with no account than `OTP_UNKNOWN_PHONES_PER_IP_PER_HOUR` (default 1000, counted on reset-otp and verify-otp together); past that limit the address gets this 429 for every phone, known ones too, so the answers cannot be used to list who is a client", body = envelope::ErrorA, headers(("Retry-After" = u64, description = "Whole seconds until the limit that refused the request would let it through (at least 1)"))),
        (status = 502, description = "the SMS gateway failed; nothing was kept", body = envelope::ErrorA)))]
pub async fn reset_otp(
    state: web::Data<AppState>,
    req: HttpRequest,
    query: web::Query<ResetQuery>,
) -> Result<HttpResponse, AuthError> {
    let phone = normalize_phone(query.contact_phone.as_deref().unwrap_or_default());
    let ip = client_ip(&req, state.trust_forwarded_for);
    let decision = {
        let mut conn = state.pool.get().await?;
        otp::reset(&mut conn, &state.tokens, &state.otp, &phone, &ip).await?
        // The connection goes back to the pool here: none is held while the SMS goes out.
    };
    match decision {
        Reset::Send(pending) => send(&state, &pending).await?,
        Reset::TestModeWithoutCode => {
            tracing::warn!("a test-mode account asked for a code, but OTP_TEST_CODE is not set")
        }
        Reset::AlreadyLive | Reset::TestMode => {}
    }
    Ok(HttpResponse::Ok().json(Sent { status: true }))
}

/// Sends a committed code, then records the outcome on a connection taken afresh: a failed
/// send takes the code and its count back, so the client can ask again at once.
async fn send(state: &AppState, pending: &Pending) -> Result<(), AuthError> {
    let client_id = pending.client_id;
    let sent = state
        .sms
        .send(&pending.phone, &code_message(&pending.code))
        .await;
    crate::sms::count(&sent);
    match sent {
        Ok(()) => {
            tracing::info!(client.id = client_id, "login code sent");
            // The SMS is out, so the answer is a success whatever happens here; unconfirmed,
            // the code still verifies, and only stops blocking a new send sooner.
            let confirmed = match state.pool.get().await {
                Ok(mut conn) => otp::confirm_sent(&mut conn, &state.otp, pending)
                    .await
                    .map_err(|e| e.to_string()),
                Err(e) => Err(e.to_string()),
            };
            if let Err(e) = confirmed {
                tracing::warn!(client.id = client_id, error.message = %e, "login code sent but not confirmed");
            }
            Ok(())
        }
        Err(e) => {
            tracing::error!(client.id = client_id, error.message = %e, "login code not sent");
            let mut conn = state.pool.get().await?;
            otp::undo_send(&mut conn, pending).await?;
            Err(Fault::SmsFailed.into())
        }
    }
}

/// Trades a live code for a primary token and the profile.
#[utoipa::path(get, path = "/clients/verify-otp", tag = "login",
    params(("contact_phone" = String, Query, example = "+966500000001"), ("code" = String, Query, description = "the 4-digit code", example = "1234")),
    responses(DatabaseAnswers,
        (status = 200, description = "`{status: 200, data: {access_token, profile}}`", body = Wrapped<Login>),
        (status = 400, description = "`Invalid or expired code` (also after 5 wrong tries), `contact_phone is required`, `code is required`; `Invalid query: …` when a key is sent twice", body = envelope::ErrorA),
        (status = 401, description = "the account is inactive", body = envelope::ErrorA),
        (status = 429, description = "`Too many attempts, try again later`: too many codes tried for this phone or client address in the last hour, or this address asked for more phones with no account than `OTP_UNKNOWN_PHONES_PER_IP_PER_HOUR` (default 1000, counted on reset-otp and verify-otp together; past it every phone gets this 429)", body = envelope::ErrorA, headers(("Retry-After" = u64, description = "Whole seconds until the limit that refused the request would let it through (at least 1)")))))]
pub async fn verify_otp(
    state: web::Data<AppState>,
    req: HttpRequest,
    query: web::Query<VerifyQuery>,
) -> Result<HttpResponse, AuthError> {
    let phone = normalize_phone(query.contact_phone.as_deref().unwrap_or_default());
    let code = query.code.as_deref().map(str::trim).unwrap_or_default();
    if phone.is_empty() {
        return Err(AuthError::invalid("contact_phone is required"));
    }
    if code.is_empty() {
        return Err(AuthError::invalid("code is required"));
    }
    let ip = client_ip(&req, state.trust_forwarded_for);
    let mut conn = state.pool.get().await?;
    let profile = otp::verify(&mut conn, &state.tokens, &state.otp, &phone, code, &ip).await?;
    let access_token = state
        .tokens
        .issue_primary(profile.client_id)
        .map_err(|e| Fault::Internal(e.to_string()))?;
    tracing::info!(client.id = profile.client_id, "logged in");
    Ok(HttpResponse::Ok().json(Wrapped::ok(Login {
        access_token,
        profile,
    })))
}
