//! `POST /point-orders`, `GET /point-orders/{correlation_id}`, `POST /point-orders/description`.

use actix_web::{HttpRequest, HttpResponse, web};
use serde::Serialize;
use serde_json::Value;
use uuid::Uuid;

use super::caller;
use crate::error::CallerAnswers;
use crate::error::{NOT_FOUND_ORDER, PointError};
use crate::state::AppState;
use crate::{offers, order_body, orders};

/// The longest `Idempotency-Key` kept.
const MAX_KEY_LEN: usize = 255;

#[utoipa::path(post, path = "/point-orders", tag = "point orders", security(("legacy" = [])),
    summary = "Create a point order (`point` settles at once, `checkout` waits for payment)",
    params(("Idempotency-Key" = Option<String>, Header, description = "the same caller and key within 24 hours answers the first order; another body gets 409")),
    request_body = crate::order_body::OrderBodySchema,
    responses(CallerAnswers, (status = 200, description = "the nine-key order", body = crate::orders::OrderView),
        (status = 400, description = "`Invalid point-order body` with details, `a point order cannot be paid with points to yourself`, `to_client_id <id> does not exist`, `point occasion <id> not found or inactive`, `point offer <id> cannot be paid with points: it has no purchased_point_amount`, `client <id> does not exist`", body = envelope::ErrorB),
        (status = 403, description = "`paying a point order with points is disabled`", body = envelope::ErrorB),
        (status = 404, description = "`point offer <id> not found or inactive`", body = envelope::ErrorB),
        (status = 409, description = "the Idempotency-Key was used with another request", body = envelope::ErrorB),
        (status = 422, description = "`insufficient points for client <id>`", body = envelope::ErrorB),
        (status = 429, description = "`too many unpaid point orders: <n> in 24 hours; pay or drop the older ones first` (a `checkout` order when the payer already has UNPAID_ORDERS_PER_CLIENT_PER_DAY, default 1000, unpaid ones from the last 24 hours)", body = envelope::ErrorB, headers(("Retry-After" = u64, description = "Whole seconds until the limit that refused the request would let it through (at least 1)")))))]
pub async fn create(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: web::Bytes,
) -> Result<HttpResponse, PointError> {
    let client_id = caller(&state, &req).await?;
    let request = order_body::parse(&body).map_err(PointError::InvalidBody)?;
    let key = match req.headers().get("idempotency-key") {
        None => None,
        Some(value) => Some(
            value
                .to_str()
                .ok()
                .map(str::trim)
                .filter(|k| !k.is_empty() && k.len() <= MAX_KEY_LEN)
                .ok_or_else(|| {
                    PointError::Validation(
                        "Idempotency-Key must be 1 to 255 visible characters".into(),
                    )
                })?,
        ),
    };
    let order = orders::create(&state, client_id, &request, key).await?;
    Ok(HttpResponse::Ok().json(order))
}

#[utoipa::path(get, path = "/point-orders/{correlation_id}", tag = "point orders", security(("legacy" = [])),
    summary = "One point order (payer or recipient)",
    params(("correlation_id" = String, Path, format = Uuid, description = "the order's correlation_id (a UUID); anything else is 404", example = "6f1c1f9e-2d0b-4b43-9a52-5d2f0c7e8a11")),
    responses(CallerAnswers, (status = 200, description = "the order, when the caller is its payer or recipient", body = crate::orders::OrderView),
        (status = 404, description = "`point order not found`: missing, or neither payer nor recipient", body = envelope::ErrorB)))]
pub async fn get(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<String>,
) -> Result<HttpResponse, PointError> {
    let client_id = caller(&state, &req).await?;
    let correlation_id = path
        .parse::<Uuid>()
        .map_err(|_| PointError::NotFound(NOT_FOUND_ORDER.into()))?;
    let mut conn = state.pool.get().await?;
    Ok(HttpResponse::Ok().json(orders::visible_to(&mut conn, correlation_id, client_id).await?))
}

/// The gift message.
#[derive(Serialize, utoipa::ToSchema)]
pub struct Description {
    /// e.g. `Sara Ali sent you 100 points  for Birthday` (the double space is on purpose).
    description: String,
}

/// The body of `/point-orders/description` as the document shows it (the handler reads
/// the raw JSON: a bad offer id is its own 400, an unknown key is ignored).
#[derive(utoipa::ToSchema)]
#[allow(dead_code)]
pub struct DescriptionBody {
    #[schema(pattern = "^[0-9a-fA-F]{24}$", example = "64b7f0c2a1b2c3d4e5f60718")]
    point_offer_id: String,
    #[schema(example = "64b7f0c2a1b2c3d4e5f60801")]
    point_occasion_id: Option<String>,
    /// Free text; wins over the occasion id.
    occasion: Option<String>,
    /// `ar` for the Arabic occasion label.
    #[schema(example = "ar")]
    language: Option<String>,
}

/// `{point_offer_id, point_occasion_id?, occasion?}` → `{description}`. Writes nothing. Looks
/// up the offer, then the occasion only when there is no free text, then the caller.
#[utoipa::path(post, path = "/point-orders/description", tag = "point orders", security(("legacy" = [])),
    summary = "Compose the gift message text (writes nothing)",
    request_body = DescriptionBody,
    responses(CallerAnswers, (status = 200, description = "the gift message", body = Description),
        (status = 400, description = "bad offer id, `point occasion <id> not found or inactive` or `client <id> does not exist`", body = envelope::ErrorB),
        (status = 404, description = "`point offer <id> not found or inactive`", body = envelope::ErrorB)))]
pub async fn description(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: web::Bytes,
) -> Result<HttpResponse, PointError> {
    let client_id = caller(&state, &req).await?;
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let offer_id = body
        .get("point_offer_id")
        .and_then(Value::as_str)
        .filter(|id| domain::ObjectId::is_valid(id))
        .ok_or_else(|| {
            PointError::Validation("point_offer_id must be a 24-character hex ObjectId".into())
        })?
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
        .ok_or_else(|| PointError::Validation(format!("client {client_id} does not exist")))?;
    let text = orders::description(
        &giver.display_name(),
        &offer.point_amount,
        occasion.as_deref(),
    );
    Ok(HttpResponse::Ok().json(Description { description: text }))
}
