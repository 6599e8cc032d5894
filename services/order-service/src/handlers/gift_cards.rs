//! `POST /gift-card-code` with `{code}`: the caller is resolved like on the point routes;
//! errors are envelope C.

use actix_web::{HttpRequest, HttpResponse, web};
use serde_json::Value;
use server::caller::CallerError;
use server::client_ip;

use crate::error::{BusyAnswers, OrderError};
use crate::gift_cards;
use crate::gift_cards::tries::Limits;
use crate::state::AppState;

/// The body as the document shows it (the handler reads the raw JSON).
#[derive(utoipa::ToSchema)]
#[allow(dead_code)]
pub struct RedeemBody {
    /// The gift-card code: trimmed, 1 to 100 characters.
    #[schema(min_length = 1, max_length = 100, example = "RAMADAN-250")]
    code: String,
}

#[utoipa::path(post, path = "/gift-card-code", tag = "gift cards", security(("legacy" = [])),
    summary = "Redeem a gift-card code",
    description = "Redeems a gift-card code for the caller. Checks run in this order: the caller (the auth service's `/api/v1/users` with the caller's Authorization, like the point routes), the body, the wrong-code limits, the code. A code is redeemed once, ever, and exactly one answer per redemption is 200. The credit goes to the point service (`/internal/v1/credits`, reference `gift-card:<code>`, applied once) or, when the redemption is made with `USE_POINT_SERVICE=false`, to the legacy add-point call (the same reference in the body and as `Idempotency-Key`); where it goes and its reference are recorded when the redemption is made, and every retry goes there, whatever `USE_POINT_SERVICE` says by then. When the credit cannot be confirmed (502) the redemption stays the caller's, pending, and the service retries it on its own until it lands (every `GIFT_CARD_RETRY_INTERVAL_MS`, backing off to `GIFT_CARD_RETRY_MAX_BACKOFF_SECONDS`); the caller's own retry resumes it. If the service credited it first, the caller's next request answers the 200 (once). While a request or the service is crediting a code, every other request for it gets 409.",
    request_body = RedeemBody,
    responses(BusyAnswers, (status = 200, description = "the code was redeemed and credited: `{message: \"The code was redeemed\", code, points}`", body = crate::gift_cards::Redeemed),
        (status = 400, description = "`code is required`: missing, not a string, empty after trimming or over 100 characters (a body that is not JSON counts as none)", body = envelope::ErrorC),
        (status = 401, description = "`Missing or invalid authorization header` (none, or not `Bearer `), `Invalid or expired token` (the auth service refused it: a primary token, an unknown or inactive client), `auth service unreachable: <error text>` or `auth response missing numeric client id`", body = envelope::ErrorC),
        (status = 404, description = "`The code not exist`: unknown code, or inactive code with no redemption (counted as a wrong try); a code deactivated after it was redeemed is decided by its redemption (200 resuming the owner's pending one, else 409)", body = envelope::ErrorC),
        (status = 409, description = "`The code has already been used`: redeemed by another client, or credited and its 200 already given; `The code is being redeemed, try again shortly`: the caller's own redemption of it is being credited right now (by another of the caller's requests or by the service's retry), so the retry tells the outcome", body = envelope::ErrorC),
        (status = 413, description = "`Payload Too Large`: the request body is over 64 KiB (refused before the caller is resolved)", body = envelope::ErrorC),
        (status = 429, description = "`Too many attempts, try again later`: this client (`GIFT_CODE_TRIES_PER_CLIENT_PER_HOUR`, default 10) or this client address (`GIFT_CODE_TRIES_PER_IP_PER_HOUR`, default 30) tried that many wrong codes in the last hour; checked before the code", body = envelope::ErrorC, headers(("Retry-After" = u64, description = "Whole seconds until the limit that refused the request would let it through (at least 1); with both limits reached, the later of the two"))),
        (status = 500, description = "`AUTH_SERVICE_URL not set` in every environment (the caller lookup is not configured; checked after the header), or any unexpected failure: its raw text outside production, `Internal server error` in production", body = envelope::ErrorC),
        (status = 502, description = "`The points could not be credited yet, try again`: the credit call failed, timed out or did not answer 2xx; the redemption stays the caller's, pending: the service retries it on its own, and the caller's retry resumes it (200 once credited, if no 200 was given for it yet)", body = envelope::ErrorC)))]
pub async fn redeem(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: web::Bytes,
) -> Result<HttpResponse, OrderError> {
    let client_id = state.caller.of_request(&req).await.map_err(|e| match e {
        CallerError::NotConfigured => OrderError::Misconfigured("AUTH_SERVICE_URL not set"),
        other => OrderError::Unauthorized(other.to_string()),
    })?;
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let code = body
        .get("code")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|c| !c.is_empty() && c.len() <= 100);
    let code = code.ok_or_else(|| OrderError::Invalid("code is required".into()))?;
    let ip = client_ip(&req, state.trust_forwarded_for);
    let limits = Limits {
        per_client: state.tries_per_client,
        per_ip: state.tries_per_ip,
    };
    let redeemed = gift_cards::redeem(
        &state.pool,
        &state.credit,
        &state.gift_card_retry,
        client_id,
        code,
        &ip,
        limits,
    )
    .await?;
    Ok(HttpResponse::Ok().json(redeemed))
}
