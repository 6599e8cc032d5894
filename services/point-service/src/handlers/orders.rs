//! `POST /point-orders`, `GET /point-orders/{correlation_id}`, `POST /point-orders/description`
//! (`relayed_routes::orders`).

use actix_web::{HttpRequest, HttpResponse, web};
use envelope::Refused;
use relayed_routes::orders::{
    Description, DescriptionRefusal, OrderLookupRefusal, OrderRefusal, PayerRefusal,
};
use serde_json::Value;
use server::caller::Caller;
use uuid::Uuid;

use crate::error::PointError;
use crate::orders::{self, Ordering};
use crate::state::AppState;
use crate::{offers, order_body};

/// The longest `Idempotency-Key` kept.
const MAX_KEY_LEN: usize = 255;

/// Creates an order from the body read field by field (`order_body`), once per
/// `Idempotency-Key`.
pub async fn create(
    caller: Caller<PointError>,
    state: web::Data<AppState>,
    req: HttpRequest,
    body: web::Bytes,
) -> Result<HttpResponse, PointError> {
    let client_id = caller.client_id;
    let request = order_body::parse(&body).map_err(|details| {
        PointError::Detailed(Refused::from(OrderRefusal::InvalidBody), details)
    })?;
    let key = match req.headers().get("idempotency-key") {
        None => None,
        Some(value) => Some(
            value
                .to_str()
                .ok()
                .map(str::trim)
                .filter(|k| !k.is_empty() && k.len() <= MAX_KEY_LEN)
                .ok_or(OrderRefusal::BadIdempotencyKey)?,
        ),
    };
    let order = orders::create(&Ordering::of(&state), client_id, &request, key).await?;
    Ok(HttpResponse::Ok().json(order))
}

/// One order, when the caller is its payer or its recipient.
pub async fn get(
    caller: Caller<PointError>,
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> Result<HttpResponse, PointError> {
    let client_id = caller.client_id;
    let correlation_id = path
        .parse::<Uuid>()
        .map_err(|_| OrderLookupRefusal::OrderNotFound)?;
    let mut conn = state.pool.get().await?;
    Ok(HttpResponse::Ok().json(orders::visible_to(&mut conn, correlation_id, client_id).await?))
}

/// `{point_offer_id, point_occasion_id?, occasion?}` → `{description}`. Writes nothing. Looks
/// up the offer, then the occasion only when there is no free text, then the caller.
pub async fn description(
    caller: Caller<PointError>,
    state: web::Data<AppState>,
    body: web::Bytes,
) -> Result<HttpResponse, PointError> {
    let client_id = caller.client_id;
    let body = super::json_body(&body);
    let offer_id = body
        .get("point_offer_id")
        .and_then(Value::as_str)
        .filter(|id| domain::ObjectId::is_valid(id))
        .ok_or(DescriptionRefusal::BadPointOfferId)?
        .to_ascii_lowercase();
    let free_text = body
        .get("occasion")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned);
    let occasion_id = body
        .get("point_occasion_id")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty() && *s != "0");
    let language_ar = offers::wants_arabic(body.get("language").and_then(Value::as_str));

    let mut conn = state.pool.get().await?;
    let offer = offers::find_active(&mut conn, &offer_id).await?;
    let occasion = match (free_text, occasion_id) {
        (Some(text), _) => Some(text),
        (None, Some(id)) => {
            let row = offers::find_active_occasion(&mut conn, id).await?;
            Some(row.view(language_ar).occasion)
        }
        (None, None) => None,
    };
    drop(conn);
    let giver = state
        .auth
        .client(client_id)
        .await?
        .ok_or(PayerRefusal::UnknownPayer(client_id))?;
    let text = orders::description(
        &giver.display_name(),
        &offer.point_amount,
        occasion.as_deref(),
    );
    Ok(HttpResponse::Ok().json(Description { description: text }))
}
