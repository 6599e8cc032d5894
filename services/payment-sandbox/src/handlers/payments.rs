//! `POST /v1/payments` (a card payment) and the read-back routes `GET /v1/payments/{id}` and
//! `GET /v1/payments?reference=…`.

use actix_web::web;
use serde::Deserialize;

use crate::answers::{PaymentList, PaymentStarted, PaymentView};
use crate::error::{ErrorBody, Refusal};
use crate::gateway::Gateway;
use crate::payments::PaymentRequest;

/// A card payment. The card id's prefix decides what happens: `decline` is declined at once
/// (`status: declined`, then the `payment_declined` webhook), `fail4xx` is refused with
/// 402, `fail5xx` fails with 500, `silent` is captured at once and answered like any 3-D
/// Secure payment but its webhook is never sent, `lost` is captured at once with no webhook
/// and its answer is lost (502), anything else waits on its 3-D Secure page (or is captured
/// at once, webhook sent, with `SANDBOX_AUTO_CAPTURE=true`).
#[utoipa::path(
    post,
    path = "/payments",
    operation_id = "create_payment",
    tag = "payments",
    request_body = PaymentRequest,
    responses(
        (status = 200, body = PaymentStarted, description = "`pending` with the 3-D Secure page (`silent` cards too), or `declined` with `redirect_url: null` (`decline` cards)"),
        (status = 402, body = ErrorBody, description = "a `fail4xx` card: `card_declined`"),
        (status = 422, body = ErrorBody, description = "`invalid_request`: the body is not a valid payment (the message says why)"),
        (status = 500, body = ErrorBody, description = "a `fail5xx` card: `gateway_error`; nothing is made"),
        (status = 502, body = ErrorBody, description = "a `lost` card: `answer_lost`; the payment was made and captured (no webhook), find it by its reference"),
    )
)]
pub async fn create(
    gateway: web::Data<Gateway>,
    body: web::Bytes,
) -> Result<web::Json<PaymentStarted>, Refusal> {
    let request: PaymentRequest = super::json_body(&body)?;
    gateway.pay(request).map(web::Json)
}

/// A payment or a session (a session's capture webhook names its `ses_…` id as the
/// `payment_id`) as the gateway has it now, whether or not its webhook was delivered.
#[utoipa::path(
    get,
    path = "/payments/{id}",
    operation_id = "get_payment",
    tag = "read-back",
    params(("id" = String, Path, description = "a payment's `pay_…` or a session's `ses_…` id")),
    responses(
        (status = 200, body = PaymentView, description = "the payment"),
        (status = 404, body = ErrorBody, description = "`not_found`: `no such payment`"),
    )
)]
pub async fn show(
    gateway: web::Data<Gateway>,
    id: web::Path<String>,
) -> Result<web::Json<PaymentView>, Refusal> {
    gateway
        .payment(&id)
        .map(|payment| web::Json(PaymentView::from(&payment)))
        .ok_or(Refusal::UnknownPayment)
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ByReference {
    /// The order's correlation id the payments were made for.
    #[param(example = "6f1c2a4e-0000-4000-8000-000000000001")]
    pub reference: String,
}

/// Every payment and session made for a reference, oldest first (an empty list when none):
/// how a caller whose pay call was lost finds its payment.
#[utoipa::path(
    get,
    path = "/payments",
    operation_id = "list_payments_by_reference",
    tag = "read-back",
    params(ByReference),
    responses(
        (status = 200, body = PaymentList, description = "the payments, oldest first"),
        (status = 422, body = ErrorBody, description = "`invalid_request`: no `reference`"),
    )
)]
pub async fn by_reference(
    gateway: web::Data<Gateway>,
    query: web::Query<ByReference>,
) -> web::Json<PaymentList> {
    let data = gateway
        .by_reference(&query.reference)
        .iter()
        .map(PaymentView::from)
        .collect();
    web::Json(PaymentList { data })
}
