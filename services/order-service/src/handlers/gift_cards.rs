//! `POST /gift-card-code` with `{code}`: the caller is resolved like on the point routes;
//! errors are envelope C.

use actix_web::{HttpRequest, HttpResponse, web};
use server::caller::Caller;
use server::client_ip;

use crate::error::{CallerAnswers, OrderError};
use crate::gift_cards::tries::{LimitAnswer, Limits};
use crate::gift_cards::{self, RedeemRefusal};
use crate::state::AppState;

/// The body as the document shows it (the handler reads the raw JSON).
#[derive(utoipa::ToSchema)]
#[allow(dead_code)]
pub struct RedeemBody {
    /// The gift-card code: trimmed, 1 to 100 characters.
    #[schema(min_length = 1, max_length = 100, example = "RAMADAN-250")]
    code: String,
}

/// Redeem a gift-card code
///
/// Redeems a gift-card code for the caller. Checks run in this order: the caller (the auth
/// service's `/api/v1/users` with the caller's Authorization, like the point routes; a
/// missing or non-`Bearer ` header before the configuration), the body, the wrong-code limits,
/// the code. A request body over 64 KiB is refused before the caller is resolved.
///
/// A code is redeemed once, ever, and exactly one answer per redemption is 200. The credit
/// goes to the point service (`/internal/v1/credits`, reference `gift-card:<code>`, applied
/// once) or, when the redemption is made with `USE_POINT_SERVICE=false`, to the legacy
/// add-point call (the same reference in the body and as `Idempotency-Key`); where it goes
/// and its reference are recorded when the redemption is made, and every retry goes there,
/// whatever `USE_POINT_SERVICE` says by then.
///
/// When the credit cannot be confirmed (502) the redemption stays the caller's, pending, and
/// the service retries it on its own until it lands (every `GIFT_CARD_RETRY_INTERVAL_MS`,
/// backing off to `GIFT_CARD_RETRY_MAX_BACKOFF_SECONDS`); the caller's own retry resumes it.
/// If the service credited it first, the caller's next request answers the 200 (once). While
/// a request or the service is crediting a code, every other request for it gets 409.
///
/// A code deactivated after it was redeemed is decided by its redemption (200 resuming the
/// owner's pending one, else 409); an unknown or inactive code with no redemption is 404 and
/// counts as a wrong try (see 429).
#[utoipa::path(post, path = "/gift-card-code", request_body = RedeemBody,
    responses(CallerAnswers, RedeemRefusal, LimitAnswer,
        (status = 200, description = gift_cards::redeemed_answer(), body = gift_cards::Redeemed),
        gift_cards::PendingAnswer))]
pub async fn redeem_gift_card_code(
    caller: Caller<OrderError>,
    state: web::Data<AppState>,
    req: HttpRequest,
    body: web::Bytes,
) -> Result<HttpResponse, OrderError> {
    let client_id = caller.client_id;
    let body = super::json_body(&body);
    let code = gift_cards::code_in(&body)?;
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
