//! `POST /webhooks/v1/payments`: public, guarded by its signature alone. What an event does
//! is `webhook::apply`'s (and the payment state machine's) decision.

use actix_web::{HttpRequest, HttpResponse, web};
use serde_json::json;

use crate::error::DatabaseAnswers;
use crate::error::PointError;
use crate::state::AppState;
use crate::webhook::{self, Event};

#[utoipa::path(post, path = "/payments", tag = "payments",
    params(("X-Signature" = String, Header, description = "t=<unix seconds>,v1=<hex HMAC-SHA256 of \"<t>.<raw body>\">; at most 300 s old")),
    request_body = crate::webhook::Event,
    responses(DatabaseAnswers, (status = 200, description = "`{received: true, outcome}`: `captured`, `declined`, `superseded` (a decline of an older attempt; the newer one decides), `duplicate_event`, `duplicate_capture`, `not_pending`, `unknown_order`, `unknown_type` (recorded with its body, its order synced with the payment service at once), or why a capture was not applied and is listed for refund (`already_successful`, `payment_failed`, `not_payable`, `unknown_order`, `amount_mismatch`, `currency_mismatch`)", body = Object),
        (status = 400, description = "signed, but not an event (a field missing or of another type, not JSON): recorded with outcome `unreadable` and, unless its `type` is `payment_declined`, listed for refund with the reason `unreadable` (once, however often it is delivered)", body = envelope::ErrorB),
        (status = 401, description = "`invalid signature`: bad, missing or stale; nothing changes", body = envelope::ErrorB),
        (status = 503, description = "a decline that depends on a pay call whose answer is not recorded yet, or the database is busy: nothing recorded; deliver it again (`Retry-After`)", body = envelope::ErrorB)))]
pub async fn payments(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: web::Bytes,
) -> Result<HttpResponse, PointError> {
    let signature = req
        .headers()
        .get("x-signature")
        .and_then(|v| v.to_str().ok());
    let now = chrono::Utc::now().timestamp();
    if let Err(refused) = webhook::verify_signature(
        state.webhook_secret.expose().as_bytes(),
        signature,
        &body,
        now,
    ) {
        refused.count();
        tracing::warn!(
            reason = refused.as_str(),
            "payment webhook refused: bad or stale signature"
        );
        return Err(PointError::Unauthorized("invalid signature".into()));
    }
    let mut conn = state.pool.get().await?;
    let event: Event = match serde_json::from_slice(&body) {
        Ok(event) => event,
        Err(e) => {
            // Signed, so the payment service sent it: it may be a capture, which must not
            // vanish. Recorded (and listed for refund) once; still 400, since the same
            // bytes again cannot be read either.
            webhook::unreadable::record(&mut conn, &body).await?;
            return Err(PointError::Validation(format!("invalid event: {e}")));
        }
    };
    let outcome = webhook::apply(
        &mut conn,
        &event,
        Some(&body),
        state.attempt_window,
        webhook::Source::Webhook,
    )
    .await?;
    Ok(HttpResponse::Ok().json(json!({"received": true, "outcome": outcome.as_str()})))
}
