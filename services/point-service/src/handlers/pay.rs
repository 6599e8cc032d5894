//! `POST /point-orders/{correlation_id}/pay/card` and `.../pay/session`
//! (`relayed_routes::pay`): the caller, then the rules (`orders::payable`), then the body, the
//! payment service through a recorded attempt, and its answer passed on as it came.

use actix_web::{HttpResponse, web};
use envelope::{Details, Refused};
use relayed_routes::pay::CardRefusal;
use serde_json::Value;
use server::caller::Caller;

use crate::error::PointError;
use crate::orders::payable::{Paying, attempt, payable};
use crate::orders::{self, OrderRow};
use crate::payments::attempts;
use crate::payments::client::{Accepted, CardSource, PayMethod, PaymentRequest};
use crate::state::AppState;

pub use crate::payments::client::PROVIDER;

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

/// How a pay route reads its body: the card route and the session route differ only in this.
pub trait ReadsMethod {
    /// The attempt recorded for the call.
    const ATTEMPT: attempts::Kind;
    /// The payment method `body` asks for, or the refusal of the body.
    fn method(body: &Value) -> Result<PayMethod, PointError>;
}

/// `pay/card`: a saved card, `{id, cvv}`, each missing or bad field in the refusal's details.
pub struct Card;

impl ReadsMethod for Card {
    const ATTEMPT: attempts::Kind = attempts::Kind::Card;

    fn method(body: &Value) -> Result<PayMethod, PointError> {
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
            return Err(PointError::Detailed(
                Refused::from(CardRefusal::InvalidPayBody),
                details,
            ));
        };
        let source = CardSource {
            kind: "card",
            card_id: card_id.to_owned(),
            cvv: cvv.to_owned(),
        };
        Ok(PayMethod::Card { source })
    }
}

/// `pay/session`: a payment session; `rememberMe` is true only for JSON `true`.
pub struct Session;

impl ReadsMethod for Session {
    const ATTEMPT: attempts::Kind = attempts::Kind::Session;

    fn method(body: &Value) -> Result<PayMethod, PointError> {
        let remember_me = body
            .get("rememberMe")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        Ok(PayMethod::Session { remember_me })
    }
}

/// Both pay routes: the order is payable, then the body `M` reads, then the payment service's
/// call through a recorded attempt.
pub async fn pay<M: ReadsMethod>(
    caller: Caller<PointError>,
    state: web::Data<AppState>,
    path: web::Path<String>,
    body: web::Bytes,
) -> Result<HttpResponse, PointError> {
    let paying = Paying::of(&state);
    let (order, amount_minor) = payable(&paying, caller.client_id, &path).await?;
    let request = PaymentRequest {
        reference: order.correlation_id.to_string(),
        amount_minor,
        currency: "SAR",
        customer_id: order.payer_id,
        method: M::method(&super::json_body(&body))?,
    };
    let accepted = attempt(&paying, &order, M::ATTEMPT, async || {
        state.payments.pay(&request).await
    })
    .await?;
    started(&state, &order, accepted).await
}
