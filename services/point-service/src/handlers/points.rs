//! `GET /points` (balance), `GET /point-history`, `GET /points-faq` (`relayed_routes::points`).

use actix_web::{HttpResponse, web};
use relayed_routes::points::{DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE};
use server::caller::Caller;

use super::first;
use crate::balance;
use crate::error::PointError;
use crate::offers;
use crate::state::AppState;

/// The caller's balance, bare.
pub async fn balance(
    caller: Caller<PointError>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, PointError> {
    let client_id = caller.client_id;
    let mut conn = state.pool.get().await?;
    Ok(HttpResponse::Ok().json(balance::balance(&mut conn, client_id).await?))
}

/// Page numbers and sizes that cannot be read fall back to the defaults; sizes are capped.
/// A key sent twice counts once, its first value (a query is never a 400 here).
pub fn page(query: &[(String, String)]) -> (i64, i64) {
    let read = |key: &str| {
        first(query, key)
            .and_then(|s| s.trim().parse::<i64>().ok())
            .filter(|n| *n >= 1)
    };
    let page = read("page").unwrap_or(1).min(1_000_000);
    let limit = read("limit")
        .unwrap_or(DEFAULT_PAGE_SIZE)
        .min(MAX_PAGE_SIZE);
    (page, limit)
}

/// A page of the caller's history, newest first.
pub async fn history(
    caller: Caller<PointError>,
    state: web::Data<AppState>,
    query: web::Query<Vec<(String, String)>>,
) -> Result<HttpResponse, PointError> {
    let client_id = caller.client_id;
    let (page, limit) = page(&query);
    let mut conn = state.pool.get().await?;
    Ok(HttpResponse::Ok().json(balance::history(&mut conn, client_id, page, limit).await?))
}

/// The questions and answers, in order.
pub async fn faq(
    _caller: Caller<PointError>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, PointError> {
    let mut conn = state.pool.get().await?;
    Ok(HttpResponse::Ok().json(offers::faq(&mut conn).await?))
}
