//! `POST /point-orders/{correlation_id}/pay/card` and `.../pay/session`. Checks, in the
//! spec's order: flag, the caller's own order, payment type, payment service configured,
//! not `successful`, not `payment_failed`, payer's profile, amount. The pay routes never
//! move the order; the webhook does. Each call is a payment attempt of the order
//! (`attempts`), recorded before the payment service is asked (the order's status checked
//! again under its lock) and again with the answer, with no connection held in between.

use std::collections::BTreeMap;

use actix_web::{HttpRequest, HttpResponse, web};
use envelope::Details;
use serde_json::Value;
use utoipa::openapi::{RefOr, Response};
use uuid::Uuid;

use super::caller;
use crate::attempts;
use crate::clients::payments::{Accepted, CardSource, PaymentRequest, SessionRequest};
use crate::error::CallerAnswers;
use crate::error::{NOT_FOUND_ORDER, PointError};
use crate::orders::{self, OrderRow};
use crate::payment_state::Status;
use crate::state::AppState;

pub const PROVIDER: &str = "payment-service";

/// The body of the card route as the document shows it (the handler reads the raw JSON and
/// answers each missing or bad field in `details`).
#[derive(utoipa::ToSchema)]
#[allow(dead_code)]
pub struct CardBody {
    /// The saved card's id.
    #[schema(example = "card_visa_4242")]
    id: String,
    /// 3 or 4 digits; forwarded to the payment service, never stored or logged.
    #[schema(pattern = "^[0-9]{3,4}$", example = "123")]
    cvv: String,
}

/// The body of the session route as the document shows it (anything but `true` is false).
#[derive(utoipa::ToSchema)]
#[allow(dead_code)]
pub struct SessionBody {
    #[schema(rename = "rememberMe")]
    remember_me: Option<bool>,
}

/// What both pay routes answer besides their own success and 400: the caller and the
/// database ([`CallerAnswers`]), then what [`payable`] and [`attempt`] refuse, and the
/// payment service's own refusal or failure.
pub struct PayAnswers;

impl utoipa::IntoResponses for PayAnswers {
    fn responses() -> BTreeMap<String, RefOr<Response>> {
        let mut answers = CallerAnswers::responses();
        answers.extend(envelope::openapi::answers(
            envelope::Envelope::B,
            &[
                ("403", "`card payment for point orders is disabled` (before any read)"),
                ("404", "`point order not found`: missing or not the caller's"),
                ("409", "`point order <id> is already paid` or `point order <id> payment failed; create a new order` (also when the order was paid or failed while this call was being checked)"),
                ("429", "`too many payment attempts for point order <id>: <n>` (PAYMENT_ATTEMPTS_PER_ORDER, default 20, card and session calls together)"),
                ("500", "the payment service failed, timed out or could not be reached: `INTERNAL_ERROR`; or `Internal server error`, or `AUTH_SERVICE_URL not set`"),
            ],
        ));
        // No schema: the payment service's body, passed through as it came.
        answers.insert(
            "4XX".into(),
            RefOr::T(Response::new(
                "the payment service's own 4xx, status and body passed through",
            )),
        );
        answers
    }
}

/// The order, if the caller may pay it now, and its amount in halalas.
async fn payable(
    state: &AppState,
    req: &HttpRequest,
    raw_id: &str,
) -> Result<(OrderRow, i64), PointError> {
    let client_id = caller(state, req).await?;
    if !state.flags.card_payments {
        return Err(PointError::Forbidden(
            "card payment for point orders is disabled",
        ));
    }
    let correlation_id = raw_id
        .parse::<Uuid>()
        .map_err(|_| PointError::NotFound(NOT_FOUND_ORDER.into()))?;
    let order = {
        let mut conn = state.pool.get().await?;
        orders::payers_order(&mut conn, correlation_id, client_id).await?
    };
    if order.payment_type != "checkout" {
        return Err(PointError::Validation(format!(
            "point order {correlation_id} is not a checkout order"
        )));
    }
    if !state.payments.is_configured() {
        return Err(PointError::Internal("PAYMENT_SERVICE_URL not set".into()));
    }
    if let Some(status) = Status::from_db(&order.status).filter(|s| *s != Status::Open) {
        return Err(not_payable(correlation_id, status));
    }
    if state.auth.client(client_id).await?.is_none() {
        return Err(PointError::Validation(format!(
            "client {client_id} does not exist"
        )));
    }
    let minor = crate::numbers::amount_minor(&order.money_amount).ok_or_else(|| {
        PointError::Validation(format!("point order {correlation_id} has no amount to pay"))
    })?;
    Ok((order, minor))
}

/// The 409 of an order that is no longer payable.
fn not_payable(correlation_id: Uuid, status: Status) -> PointError {
    PointError::Conflict(match status {
        Status::PaymentFailed => {
            format!("point order {correlation_id} payment failed; create a new order")
        }
        _ => format!("point order {correlation_id} is already paid"),
    })
}

/// Asks the payment service through `call`, with the attempt recorded on both sides of the
/// call and no connection held during it. The order is checked again under its lock when
/// the attempt is recorded: a decline or capture may have finished it since [`payable`].
async fn attempt<F>(
    state: &AppState,
    order: &OrderRow,
    kind: attempts::Kind,
    call: F,
) -> Result<Accepted, PointError>
where
    F: AsyncFnOnce() -> Result<Accepted, PointError>,
{
    let correlation_id = order.correlation_id;
    let attempt = {
        let mut conn = state.pool.get().await?;
        attempts::start(
            &mut conn,
            correlation_id,
            kind,
            state.attempt_window,
            state.limits.attempts_per_order,
            state.sync.after,
        )
        .await?
    }
    .map_err(|status| not_payable(correlation_id, status))?;
    let result = call().await;
    let answer = match &result {
        Ok(accepted) => match accepted.json["id"].as_str().filter(|id| !id.is_empty()) {
            Some(id) => attempts::Answer::Answered(id.to_owned()),
            None => attempts::Answer::Lost,
        },
        Err(PointError::PaymentRefused { .. }) => attempts::Answer::Refused,
        Err(_) => attempts::Answer::Lost,
    };
    let recorded = match state.pool.get().await {
        Ok(mut conn) => attempts::finish(&mut conn, correlation_id, attempt, &answer).await,
        Err(e) => Err(e.into()),
    };
    if let Err(e) = recorded {
        // The payment exists whatever we failed to write: the client still gets its 3-D
        // Secure step. The attempt stays `started` and counts as lost once its window has
        // passed, which the webhook's rules handle.
        tracing::error!(order.id = %correlation_id, attempt.id = attempt, error.message = %e, "payment attempt's answer not recorded");
    }
    result
}

/// Notes the payment on the order (best effort) and answers the payment service's 2xx as
/// it came.
async fn started(
    state: &AppState,
    order: &OrderRow,
    accepted: Accepted,
) -> Result<HttpResponse, PointError> {
    let mut conn = state.pool.get().await?;
    orders::note_payment(
        &mut conn,
        order.correlation_id,
        PROVIDER,
        accepted.json["id"].as_str(),
    )
    .await;
    tracing::info!(order.id = %order.correlation_id, "payment started");
    let mut response = HttpResponse::Ok();
    response.content_type(
        accepted
            .content_type
            .as_deref()
            .unwrap_or("application/json"),
    );
    Ok(response.body(accepted.body))
}

#[utoipa::path(post, path = "/point-orders/{correlation_id}/pay/card", tag = "payments", security(("legacy" = [])),
    summary = "Pay a checkout order with a saved card (3-D Secure)",
    params(("correlation_id" = String, Path, format = Uuid, description = "the order's correlation_id (a UUID); anything else is 404", example = "6f1c1f9e-2d0b-4b43-9a52-5d2f0c7e8a11")),
    request_body = CardBody,
    responses(PayAnswers, (status = 200, description = "the payment service's answer as it came: `{id, status: pending, redirect_url}` (3-D Secure)", body = crate::clients::payments::PaymentStarted),
        (status = 400, description = "`Invalid pay body` with details, `point order <id> is not a checkout order`, `client <id> does not exist`", body = envelope::ErrorB)))]
pub async fn card(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<String>,
    body: web::Bytes,
) -> Result<HttpResponse, PointError> {
    let (order, amount_minor) = payable(&state, &req, &path).await?;
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let card_id = body
        .get("id")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty());
    let cvv = body
        .get("cvv")
        .and_then(Value::as_str)
        .filter(|s| (3..=4).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_digit()));
    let (Some(card_id), Some(cvv)) = (card_id, cvv) else {
        let mut details = Details::new();
        if card_id.is_none() {
            details.add_field_error("id", "Required: the saved card's id");
        }
        if cvv.is_none() {
            details.add_field_error("cvv", "Required: 3 or 4 digits");
        }
        return Err(PointError::InvalidPayBody(details));
    };
    let request = PaymentRequest {
        reference: order.correlation_id.to_string(),
        amount_minor,
        currency: "SAR",
        customer_id: order.payer_id,
        source: CardSource {
            kind: "card",
            card_id,
            cvv,
        },
    };
    let accepted = attempt(&state, &order, attempts::Kind::Card, async || {
        state.payments.pay(&request).await
    })
    .await?;
    started(&state, &order, accepted).await
}

#[utoipa::path(post, path = "/point-orders/{correlation_id}/pay/session", tag = "payments", security(("legacy" = [])),
    summary = "Start a payment session for a new card or a wallet",
    params(("correlation_id" = String, Path, format = Uuid, description = "the order's correlation_id (a UUID); anything else is 404", example = "6f1c1f9e-2d0b-4b43-9a52-5d2f0c7e8a11")),
    request_body = SessionBody,
    responses(PayAnswers, (status = 200, description = "the payment service's answer as it came: `{id, session_token, …}`", body = Object),
        (status = 400, description = "`point order <id> is not a checkout order` or `client <id> does not exist`", body = envelope::ErrorB)))]
pub async fn session(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<String>,
    body: web::Bytes,
) -> Result<HttpResponse, PointError> {
    let (order, amount_minor) = payable(&state, &req, &path).await?;
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let remember_me = body
        .get("rememberMe")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let request = SessionRequest {
        reference: order.correlation_id.to_string(),
        amount_minor,
        currency: "SAR",
        customer_id: order.payer_id,
        remember_me,
    };
    let accepted = attempt(&state, &order, attempts::Kind::Session, async || {
        state.payments.session(&request).await
    })
    .await?;
    started(&state, &order, accepted).await
}
