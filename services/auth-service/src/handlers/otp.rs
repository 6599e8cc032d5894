//! `GET /api/v1/clients/reset-otp` and `GET /api/v1/clients/verify-otp`.

use actix_web::{HttpRequest, HttpResponse, web};
use serde::{Deserialize, Serialize};

use crate::caller::AccessRefusal;
use crate::error::{AuthError, Fault, QueryRefusals, SmsAnswers};
use crate::otp::{self, OtpLimit, Pending, Reset, ResetRefusal, VerifyRefusal};
use crate::phone::{PhoneRefusal, normalize_phone, required_phone};
use crate::profile::{Profile, Wrapped};
use crate::sms::code_message;
use crate::state::AppState;
use envelope::Refuses;
use server::client_ip;

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ResetQuery {
    /// With its leading + (a + lost in the query string is restored).
    #[param(required = true, value_type = String, example = "+966500000001")]
    contact_phone: Option<String>,
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct VerifyQuery {
    #[param(required = true, value_type = String, example = "+966500000001")]
    contact_phone: Option<String>,
    /// The 4-digit code.
    #[param(required = true, value_type = String, example = "1234")]
    code: Option<String>,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct Login {
    access_token: String,
    profile: Profile,
}

/// reset-otp's refusals: a phone with no account, the OTP limit, an inactive account.
type ResetRefusals = QueryRefusals<Refuses<(ResetRefusal, OtpLimit, AccessRefusal)>>;

/// verify-otp's refusals: no phone, no code or a wrong one, the OTP limit, an inactive
/// account.
type VerifyRefusals =
    QueryRefusals<Refuses<(PhoneRefusal, VerifyRefusal, OtpLimit, AccessRefusal)>>;

/// The answer to reset-otp.
#[derive(Serialize, utoipa::ToSchema)]
pub struct Sent {
    /// Always true.
    status: bool,
}

/// Sends a login code unless one is live. Always `{status: true}` when it succeeds.
///
/// A phone with no account gets the 400, counted per client address: past
/// `OTP_UNKNOWN_PHONES_PER_IP_PER_HOUR` (default 1000, counted on reset-otp and verify-otp
/// together) the address gets the 429 for every phone, known ones too, so the answers
/// cannot be used to list who is a client. The 429 also answers too many SMS for this phone
/// or client address in the last hour; an inactive account gets 401; a failed SMS gateway
/// 502, with nothing kept.
#[utoipa::path(get, path = "/clients/reset-otp", params(ResetQuery), responses(SmsAnswers, ResetRefusals,
    (status = 200, description = "sent, or a live code kept", body = Sent)))]
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
                tracing::warn!(
                    client.id = client_id,
                    error.message = %e,
                    "login code sent but not confirmed"
                );
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
///
/// A wrong or expired code's 400 also answers a code after 5 wrong tries, and a phone with
/// no account (counted per client address as on reset-otp). The 429 answers too many codes
/// tried for this phone or client address in the last hour, or an address past
/// `OTP_UNKNOWN_PHONES_PER_IP_PER_HOUR`; an inactive account gets 401.
#[utoipa::path(get, path = "/clients/verify-otp", params(VerifyQuery), responses(VerifyRefusals,
    (status = 200, description = "`{status: 200, data: {access_token, profile}}`", body = Wrapped<Login>)))]
pub async fn verify_otp(
    state: web::Data<AppState>,
    req: HttpRequest,
    query: web::Query<VerifyQuery>,
) -> Result<HttpResponse, AuthError> {
    let phone = required_phone(query.contact_phone.as_deref())?;
    let code = query.code.as_deref().map(str::trim).unwrap_or_default();
    if code.is_empty() {
        return Err(VerifyRefusal::CodeMissing.into());
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
