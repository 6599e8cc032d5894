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
use crate::payments::client::{Accepted, CardSource, PaymentRequest, SessionRequest};
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

/// Pays with a saved card: `{id, cvv}`, each missing or bad field in the refusal's details.
pub async fn card(
    caller: Caller<PointError>,
    state: web::Data<AppState>,
    path: web::Path<String>,
    body: web::Bytes,
) -> Result<HttpResponse, PointError> {
    let client_id = caller.client_id;
    let paying = Paying::of(&state);
    let (order, amount_minor) = payable(&paying, client_id, &path).await?;
    let body = super::json_body(&body);
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
    let accepted = attempt(&paying, &order, attempts::Kind::Card, async || {
        state.payments.pay(&request).await
    })
    .await?;
    started(&state, &order, accepted).await
}

/// Starts a payment session: `rememberMe` is true only for JSON `true`.
pub async fn session(
    caller: Caller<PointError>,
    state: web::Data<AppState>,
    path: web::Path<String>,
    body: web::Bytes,
) -> Result<HttpResponse, PointError> {
    let client_id = caller.client_id;
    let paying = Paying::of(&state);
    let (order, amount_minor) = payable(&paying, client_id, &path).await?;
    let body = super::json_body(&body);
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
    let accepted = attempt(&paying, &order, attempts::Kind::Session, async || {
        state.payments.session(&request).await
    })
    .await?;
    started(&state, &order, accepted).await
}
