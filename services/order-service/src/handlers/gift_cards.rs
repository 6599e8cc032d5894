//! `POST /gift-card-code` with `{code}`: the caller is resolved like on the point routes;
//! errors are envelope C.

use actix_web::{HttpRequest, HttpResponse, web};
use serde_json::Value;
use server::caller::CallerError;
use server::client_ip;

use crate::error::OrderError;
use crate::gift_cards;
use crate::state::AppState;

pub async fn redeem(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: web::Bytes,
) -> Result<HttpResponse, OrderError> {
    let authorization = req
        .headers()
        .get("authorization")
        .and_then(|v| v.to_str().ok());
    let client_id = state
        .caller
        .caller(authorization)
        .await
        .map_err(|e| match e {
            CallerError::NotConfigured => OrderError::Internal(e.to_string()),
            other => OrderError::Unauthorized(other.to_string()),
        })?;
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let code = body
        .get("code")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|c| !c.is_empty() && c.len() <= 100);
    let code = code.ok_or_else(|| OrderError::Invalid("code is required".into()))?;
    let ip = client_ip(&req, state.trust_forwarded_for);
    let limits = (state.tries_per_client, state.tries_per_ip);
    let redeemed =
        gift_cards::redeem(&state.pool, &state.credit, client_id, code, &ip, limits).await?;
    Ok(HttpResponse::Ok().json(redeemed))
}
