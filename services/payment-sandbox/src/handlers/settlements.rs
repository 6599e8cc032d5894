//! `GET /v1/settlements/{date}`.

use actix_web::web;
use serde::Deserialize;

use crate::answers::{SettlementEntry, SettlementPage};
use crate::error::Refusal;
use crate::gateway::Gateway;
use crate::refusal_answers;
use crate::settlements::Unreadable;

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Path)]
pub struct SettlementDay {
    /// The UTC day, `YYYY-MM-DD`.
    #[param(example = "2026-03-01")]
    pub date: String,
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct Paging {
    /// The previous page's `next`; none for the first page. Opaque.
    pub cursor: Option<String>,
}

refusal_answers! {
    /// What a settlement refuses: a day or a cursor it cannot read.
    pub SettlementRefusals {
        Refusal::Unreadable(Unreadable::Date("<date>".into())) => "`{date}` is not a day",
        Refusal::Unreadable(Unreadable::Cursor) => "`cursor` is not this day's",
    }
}

/// The payments captured on a UTC day
///
/// By capture time then id, in pages of `SANDBOX_SETTLEMENT_PAGE_SIZE` (default 100); the
/// last page's `next` is `null`.
#[utoipa::path(get, path = "/settlements/{date}", params(SettlementDay, Paging),
    responses((status = 200, body = SettlementPage), SettlementRefusals))]
pub async fn get_settlement(
    gateway: web::Data<Gateway>,
    path: web::Path<SettlementDay>,
    paging: web::Query<Paging>,
) -> Result<web::Json<SettlementPage>, Refusal> {
    let page = gateway.settlement(&path.date, paging.cursor.as_deref())?;
    Ok(web::Json(SettlementPage {
        data: page
            .payments
            .iter()
            .filter_map(SettlementEntry::of)
            .collect(),
        next: page.next.map(|cursor| cursor.encode()),
    }))
}
