//! `POST /v1/payments` (a card payment) and the read-back routes `GET /v1/payments/{id}` and
//! `GET /v1/payments?reference=…`.

use actix_web::web;
use serde::Deserialize;

use crate::answers::{PaymentList, PaymentStarted, PaymentView};
use crate::error::Refusal;
use crate::gateway::Gateway;
use crate::payments::PaymentRequest;
use crate::refusal_answers;

refusal_answers! {
    /// What a card payment refuses: a body that is not a payment, and the cards that play a
    /// failure.
    pub PaymentRefusals {
        Refusal::InvalidRequest("<why>".into()) => "the body is not a valid payment, or a late \
                                                    card id names no hold of 1 to 600 s",
        Refusal::CardDeclined => "a `fail4xx` card",
        Refusal::GatewayFailed => "a `fail5xx` card; nothing is made",
        Refusal::AnswerLost => "a `lost` card: the payment was made and captured (no webhook); \
                                find it by its reference; or a `latelost<N>` (`latedecline<N>`) \
                                card, answered after N s: its payment is made captured \
                                (declined), no webhook, after the first read by reference",
    }
}

refusal_answers! {
    /// What reading a payment or a session back refuses.
    pub UnknownPayment { Refusal::UnknownPayment => "no payment or session has this id" }
}

refusal_answers! {
    /// What listing a reference's payments refuses: a query the route cannot read.
    pub ReferenceRefusals {
        Refusal::InvalidRequest("<why>".into()) => "no `reference`",
    }
}

/// A card payment
///
/// The card id's prefix decides what happens: `decline` is declined at once (`status:
/// declined`, `redirect_url: null`, then the `payment_declined` webhook), `fail4xx` is
/// refused with 402, `fail5xx` fails with 500, `silent` is captured at once and answered like
/// any 3-D Secure payment but its webhook is never sent, `lost` is captured at once with no
/// webhook and its answer is lost (502), `latelost<N>` and `latedecline<N>` (N: 1 to 600
/// seconds, e.g. `latelost12-card`) are a slow gateway whose answer is lost and which
/// commits after the caller's first look: the call is held N seconds (past the caller's
/// wait) and answered 502; the payment, captured or declined with no webhook, is made once N
/// seconds have passed and the reference has been read back since the call (that read finds
/// nothing), or ten minutes after the call without such a read; until then no read-back route
/// knows of it, and a caller that hung up changes nothing. Anything else waits on its 3-D
/// Secure page (or is captured at once, webhook sent, with `SANDBOX_AUTO_CAPTURE=true`).
#[utoipa::path(post, path = "/payments", request_body = PaymentRequest,
    responses((status = 200, body = PaymentStarted), PaymentRefusals))]
pub async fn create_payment(
    gateway: web::Data<Gateway>,
    body: web::Bytes,
) -> Result<web::Json<PaymentStarted>, Refusal> {
    let request: PaymentRequest = super::json_body(&body)?;
    gateway.pay(request).await.map(web::Json)
}

/// A payment or a session as the gateway has it now
///
/// `{id}` is a payment's `pay_…` or a session's `ses_…` id. The answer is the gateway's
/// truth, whether or not its webhook was delivered; a session's capture webhook names its
/// `ses_…` id as the `payment_id`.
#[utoipa::path(get, path = "/payments/{id}",
    responses((status = 200, body = PaymentView), UnknownPayment))]
pub async fn get_payment(
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

/// Every payment and session made for a reference
///
/// Oldest first, an empty list when none: how a caller whose pay call was lost finds its
/// payment.
#[utoipa::path(get, path = "/payments", params(ByReference),
    responses((status = 200, body = PaymentList), ReferenceRefusals))]
pub async fn list_payments_by_reference(
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
