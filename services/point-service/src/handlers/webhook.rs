//! `POST /webhooks/v1/payments`: public, guarded by its signature alone. What an event does
//! is `payments::webhook::apply`'s (and the payment state machine's) decision.

use actix_web::{HttpRequest, HttpResponse, web};
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};

use crate::error::DatabaseAnswers;
use crate::error::PointError;
use crate::payments::webhook::event::{Event, Source};
use crate::payments::webhook::{self, Outcome, WebhookRefusal, signature};
use crate::state::AppState;

/// A payment event from the payment service
///
/// Public, guarded by `X-Signature` alone: a bad, missing or stale one is `BadSignature` and
/// changes nothing. Events count once by id. The answer's `outcome` says what the event did:
/// `captured`, `declined`, `superseded` (a decline of an older attempt; the newer one
/// decides), `duplicate_event`, `duplicate_capture`, `not_pending`, `unknown_order`,
/// `unknown_type` (recorded with its body, its order synced with the payment service at
/// once), or why a capture was not applied and is listed for refund (`already_successful`,
/// `payment_failed`, `not_payable`, `unknown_order`, `amount_mismatch`, `currency_mismatch`).
///
/// A signed body that is not an event (a field missing or of another type, not JSON) is
/// `UnreadableEvent`, yet recorded with outcome `unreadable` and, unless its `type` is
/// `payment_declined`, listed for refund with the reason `unreadable` (once, however often it
/// is delivered). A decline that depends on a pay call whose answer is not recorded yet
/// records nothing and answers 503 with `Retry-After`: deliver it again.
#[utoipa::path(post, path = "/payments",
    params(("X-Signature" = String, Header, description = signature::header_text())),
    request_body = Event,
    responses(DatabaseAnswers, WebhookRefusal,
        (status = 200, description = "`{received: true, outcome}`", body = Received),
        RetryAnswer))]
pub async fn receive_payment_event(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: web::Bytes,
) -> Result<HttpResponse, PointError> {
    let signature = req
        .headers()
        .get("x-signature")
        .and_then(|v| v.to_str().ok());
    let now = chrono::Utc::now().timestamp();
    if let Err(fault) = signature::verify(
        state.webhook_secret.expose().as_bytes(),
        signature,
        &body,
        now,
    ) {
        fault.count();
        tracing::warn!(
            reason = fault.as_str(),
            "payment webhook refused: bad or stale signature"
        );
        return Err(PointError::Refused(WebhookRefusal::BadSignature.into()));
    }
    let mut conn = state.pool.get().await?;
    let event: Event = match serde_json::from_slice(&body) {
        Ok(event) => event,
        Err(e) => {
            // Signed, so the payment service sent it: it may be a capture, which must not
            // vanish. Recorded (and listed for refund) once; still 400, since the same
            // bytes again cannot be read either.
            webhook::unreadable::record(&mut conn, &body).await?;
            let why = e.to_string();
            return Err(PointError::Refused(
                WebhookRefusal::UnreadableEvent(why).into(),
            ));
        }
    };
    let outcome = webhook::apply(
        &mut conn,
        &event,
        Some(&body),
        state.attempt_window,
        Source::Webhook,
    )
    .await?;
    Ok(HttpResponse::Ok().json(Received {
        received: true,
        outcome: outcome.as_str(),
    }))
}

envelope::answer_set! {
    /// The route's 503: a decline that must wait for a pay call's answer, or the database busy.
    RetryAnswer, envelope::Envelope::B, {
        "503" => format!(
            "`{}` (`Retry-After`); or {}",
            webhook::ATTEMPT_NOT_RECORDED,
            db::BUSY_ANSWER
        ),
    }
}

/// The answer to an event the service read: what it did.
#[derive(serde::Serialize)]
pub struct Received {
    received: bool,
    outcome: &'static str,
}

impl utoipa::PartialSchema for Received {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .property(
                "received",
                ObjectBuilder::new()
                    .schema_type(Type::Boolean)
                    .enum_values(Some([true])),
            )
            .required("received")
            .property(
                "outcome",
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .enum_values(Some(Outcome::names()))
                    .description(Some("What the event did (see the operation).")),
            )
            .required("outcome")
            .into()
    }
}

impl utoipa::ToSchema for Received {}
