//! `GET /point-offers`, `GET /point-offers/{id}`, `GET /point-occasions`
//! (`relayed_routes::offers`).

use actix_web::{HttpResponse, web};
use relayed_routes::offers::OfferIdRefusal;
use server::caller::Caller;

use super::first;
use crate::error::PointError;
use crate::offers;
use crate::state::AppState;

/// The whole list; query keys (`id` included) are ignored.
pub async fn offers(
    _caller: Caller<PointError>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, PointError> {
    let mut conn = state.pool.get().await?;
    Ok(HttpResponse::Ok().json(offers::list(&mut conn).await?))
}

/// One active offer by its 24-hex id.
pub async fn offer(
    _caller: Caller<PointError>,
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> Result<HttpResponse, PointError> {
    if !domain::ObjectId::is_valid(&path) {
        return Err(OfferIdRefusal::BadOfferId.into());
    }
    let mut conn = state.pool.get().await?;
    Ok(HttpResponse::Ok().json(offers::find_active(&mut conn, &path).await?))
}

/// The active occasions, labelled in the asked language.
pub async fn occasions(
    _caller: Caller<PointError>,
    state: web::Data<AppState>,
    query: web::Query<Vec<(String, String)>>,
) -> Result<HttpResponse, PointError> {
    let arabic = offers::wants_arabic(first(&query, "language"));
    let mut conn = state.pool.get().await?;
    let rows = offers::active_occasions(&mut conn).await?;
    Ok(HttpResponse::Ok().json(rows.iter().map(|row| row.view(arabic)).collect::<Vec<_>>()))
}
