//! `POST /v1/payment-sessions` and `GET /v1/payment-sessions/{id}`.

use actix_web::web;

use super::payments::UnknownPayment;
use crate::answers::{PaymentView, SessionStarted};
use crate::error::Refusal;
use crate::gateway::Gateway;
use crate::payments::SessionRequest;
use crate::refusal_answers;

refusal_answers! {
    /// What opening a session refuses.
    pub SessionRefusals {
        Refusal::InvalidRequest("<why>".into()) => "the body is not a valid session",
    }
}

/// A payment session
///
/// It has no card: it waits on its 3-D Secure page, or is captured at once (webhook sent)
/// with `SANDBOX_AUTO_CAPTURE=true`.
#[utoipa::path(post, path = "/payment-sessions", request_body = SessionRequest,
    responses((status = 200, body = SessionStarted), SessionRefusals))]
pub async fn create_payment_session(
    gateway: web::Data<Gateway>,
    body: web::Bytes,
) -> Result<web::Json<SessionStarted>, Refusal> {
    let request: SessionRequest = super::json_body(&body)?;
    gateway.open_session(request).map(web::Json)
}

/// A session read back
///
/// `{id}` is the session's `ses_…` id; the same answer as `GET /v1/payments/{id}`.
#[utoipa::path(get, path = "/payment-sessions/{id}",
    responses((status = 200, body = PaymentView, description = "the session"), UnknownPayment))]
pub async fn get_payment_session(
    gateway: web::Data<Gateway>,
    id: web::Path<String>,
) -> Result<web::Json<PaymentView>, Refusal> {
    super::payments::get_payment(gateway, id).await
}
