//! `GET /system_configs/point_rates`. No token.

use actix_web::{HttpResponse, web};

use crate::error::{BusyAnswers, OrderError};
use crate::point_rates::{self, Rate};
use crate::state::AppState;

/// The earn-rate table
///
/// No token; query keys are ignored. Served by the order service itself (never 502/504). The
/// 200 is a bare array of earn-rate rows sorted by `amount_from` ascending (null counts as 0);
/// `[]` when the option is unset.
#[utoipa::path(get, path = "/system_configs/point_rates",
    responses(BusyAnswers, (status = 200, description = "the rows", body = [Rate]),
        point_rates::InternalAnswer))]
pub async fn list_earn_rates(state: web::Data<AppState>) -> Result<HttpResponse, OrderError> {
    let mut conn = state.pool.get().await?;
    Ok(HttpResponse::Ok().json(point_rates::rates(&mut conn).await?))
}
