//! `GET /system_configs/point_rates`. No token.

use actix_web::{HttpResponse, web};

use crate::error::{BusyAnswers, OrderError};
use crate::point_rates;
use crate::state::AppState;

#[utoipa::path(get, path = "/system_configs/point_rates", tag = "earn rates",
    summary = "The earn-rate table",
    description = "The earn-rate table. No token; query keys are ignored. Served by the order service itself (never 502/504).",
    responses(BusyAnswers, (status = 200, description = "a bare array of earn-rate rows sorted by `amount_from` ascending (null counts as 0); `[]` when the option is unset", body = [crate::point_rates::Rate]),
        (status = 500, description = "the stored option is not a list (`the point_rates option is not a list`) or a row is not an object (`a point_rates row is not an object`): that text outside production, `Internal server error` in production; any other unexpected failure likewise with its raw text", body = envelope::ErrorC)))]
pub async fn point_rates(state: web::Data<AppState>) -> Result<HttpResponse, OrderError> {
    let mut conn = state.pool.get().await?;
    Ok(HttpResponse::Ok().json(point_rates::rates(&mut conn).await?))
}
