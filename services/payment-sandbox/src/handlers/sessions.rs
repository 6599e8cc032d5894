//! `POST /v1/payment-sessions` and `GET /v1/payment-sessions/{id}`.

use actix_web::web;

use crate::answers::{PaymentView, SessionStarted};
use crate::error::{ErrorBody, Refusal};
use crate::gateway::Gateway;
use crate::payments::SessionRequest;

/// A payment session. It has no card: it waits on its 3-D Secure page, or is captured at
/// once (webhook sent) with `SANDBOX_AUTO_CAPTURE=true`.
#[utoipa::path(
    post,
    path = "/payment-sessions",
    operation_id = "create_payment_session",
    tag = "sessions",
    request_body = SessionRequest,
    responses(
        (status = 200, body = SessionStarted, description = "the session, `pending`, with its 3-D Secure page"),
        (status = 422, body = ErrorBody, description = "`invalid_request`: the body is not a valid session (the message says why)"),
    )
)]
pub async fn create(
    gateway: web::Data<Gateway>,
    body: web::Bytes,
) -> Result<web::Json<SessionStarted>, Refusal> {
    let request: SessionRequest = super::json_body(&body)?;
    gateway.open_session(request).map(web::Json)
}

/// A session read back: the same answer as `GET /v1/payments/{id}`.
#[utoipa::path(
    get,
    path = "/payment-sessions/{id}",
    operation_id = "get_payment_session",
    tag = "sessions",
    params(("id" = String, Path, description = "the session's `ses_…` id")),
    responses(
        (status = 200, body = PaymentView, description = "the session"),
        (status = 404, body = ErrorBody, description = "`not_found`: `no such payment`"),
    )
)]
pub async fn show(
    gateway: web::Data<Gateway>,
    id: web::Path<String>,
) -> Result<web::Json<PaymentView>, Refusal> {
    super::payments::show(gateway, id).await
}
