//! `GET /point-offers`, `GET /point-offers/{id}`, `GET /point-occasions`.

use actix_web::{HttpRequest, HttpResponse, web};

use super::{caller, first};
use crate::error::CallerAnswers;
use crate::error::PointError;
use crate::offers;
use crate::state::AppState;

/// The whole list; query keys (`id` included) are ignored.
#[utoipa::path(get, path = "/point-offers", tag = "offers", security(("legacy" = [])),
    summary = "Active point offers (query keys are ignored)",
    description = "Active, non-deleted offers by sequence, then legacy id, then id. Query keys are ignored.",
    responses(CallerAnswers, (status = 200, description = "the active offers, bare", body = [crate::offers::Offer])))]
pub async fn offers(
    state: web::Data<AppState>,
    req: HttpRequest,
) -> Result<HttpResponse, PointError> {
    caller(&state, &req).await?;
    let mut conn = state.pool.get().await?;
    Ok(HttpResponse::Ok().json(offers::list(&mut conn).await?))
}

#[utoipa::path(get, path = "/point-offers/{id}", tag = "offers", security(("legacy" = [])),
    summary = "One point offer",
    params(("id" = String, Path, description = "24 hex characters, either case", example = "64b7f0c2a1b2c3d4e5f60718")),
    responses(CallerAnswers, (status = 200, description = "the offer, bare", body = crate::offers::Offer),
        (status = 400, description = "`point offer id must be a 24-character hex ObjectId` (no details)", body = envelope::ErrorB),
        (status = 404, description = "`point offer <id> not found or inactive`", body = envelope::ErrorB)))]
pub async fn offer(
    state: web::Data<AppState>,
    req: HttpRequest,
    path: web::Path<String>,
) -> Result<HttpResponse, PointError> {
    caller(&state, &req).await?;
    if !domain::ObjectId::is_valid(&path) {
        return Err(PointError::Validation(
            "point offer id must be a 24-character hex ObjectId".into(),
        ));
    }
    let mut conn = state.pool.get().await?;
    Ok(HttpResponse::Ok().json(offers::find_active(&mut conn, &path).await?))
}

#[utoipa::path(get, path = "/point-occasions", tag = "offers", security(("legacy" = [])),
    summary = "Active point occasions",
    params(("language" = Option<String>, Query, description = "`ar` (trimmed, any case) for Arabic labels; anything else English; never an error (sent twice, the first counts)")),
    responses(CallerAnswers, (status = 200, description = "the active occasions, labels in the asked language", body = [crate::offers::Occasion])))]
pub async fn occasions(
    state: web::Data<AppState>,
    req: HttpRequest,
    query: web::Query<Vec<(String, String)>>,
) -> Result<HttpResponse, PointError> {
    caller(&state, &req).await?;
    let arabic = offers::wants_arabic(first(&query, "language"));
    let mut conn = state.pool.get().await?;
    let rows = offers::active_occasions(&mut conn).await?;
    Ok(HttpResponse::Ok().json(rows.iter().map(|row| row.view(arabic)).collect::<Vec<_>>()))
}
