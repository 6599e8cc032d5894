//! `GET /v1/settlements/{date}`.

use actix_web::web;
use serde::Deserialize;

use crate::answers::{SettlementEntry, SettlementPage};
use crate::error::{ErrorBody, Refusal};
use crate::gateway::Gateway;

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct Paging {
    /// The previous page's `next`; none for the first page. Opaque.
    pub cursor: Option<String>,
}

/// The payments captured on a UTC day, by capture time then id, in pages of
/// `SANDBOX_SETTLEMENT_PAGE_SIZE` (default 100).
#[utoipa::path(
    get,
    path = "/settlements/{date}",
    operation_id = "get_settlement",
    tag = "read-back",
    params(("date" = String, Path, description = "the UTC day, `YYYY-MM-DD`", example = "2026-03-01"), Paging),
    responses(
        (status = 200, body = SettlementPage, description = "a page of the day's captures; `next: null` on the last"),
        (status = 422, body = ErrorBody, description = "`invalid_date`: not a `YYYY-MM-DD` day; `invalid_cursor`: not a cursor this sandbox gave for this day"),
    )
)]
pub async fn day(
    gateway: web::Data<Gateway>,
    date: web::Path<String>,
    paging: web::Query<Paging>,
) -> Result<web::Json<SettlementPage>, Refusal> {
    let page = gateway.settlement(&date, paging.cursor.as_deref())?;
    Ok(web::Json(SettlementPage {
        data: page
            .payments
            .iter()
            .filter_map(SettlementEntry::of)
            .collect(),
        next: page.next.map(|cursor| cursor.encode()),
    }))
}
