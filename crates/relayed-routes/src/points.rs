//! The caller's points: `GET /points` (balance), `GET /point-history`, `GET /points-faq`.

use bigdecimal::BigDecimal;
use chrono::{DateTime, Utc};
use domain::PageMeta;
use serde::Serialize;
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use crate::closed_sets::LedgerKind;

/// The balance, bare, in the spec's key order.
#[derive(Debug, Serialize, PartialEq, Eq, ToSchema)]
pub struct Balance {
    /// The client id as text.
    pub id: String,
    pub user_id: String,
    /// At most 4 decimals, no trailing zeros or dot; `0` with no account; may be negative.
    pub points: String,
    /// `YYYY-MM-DD` in Asia/Riyadh, or null. After the points expired it still names the date
    /// they expired on: only a new earn moves it.
    #[serde(rename = "pointsExpirationDate")]
    #[schema(required)]
    pub points_expiration_date: Option<String>,
}

/// One line of the history.
#[derive(Debug, Serialize, ToSchema)]
pub struct HistoryEntry {
    pub id: i64,
    /// The ledger's kind as stored: earn, spend, gift_sent, gift_received, purchase,
    /// gift_card_credit, adjustment, expiry. An expiry is listed like every other entry, by
    /// its kind and its signed change (the negative balance it took), so that the history
    /// still adds up to the balance; no kind is renamed or hidden for the app.
    #[schema(value_type = LedgerKind)]
    pub kind: String,
    /// The signed change, as points text.
    #[serde(serialize_with = "crate::wire::as_points_text")]
    #[schema(value_type = String)]
    pub points: BigDecimal,
    /// The point order the line belongs to, or null.
    #[schema(required)]
    pub correlation_id: Option<Uuid>,
    pub created_at: DateTime<Utc>,
}

/// A page of the history, newest first.
#[derive(Debug, Serialize, ToSchema)]
pub struct HistoryPage {
    pub data: Vec<HistoryEntry>,
    pub meta: PageMeta,
}

/// A page's size when the query names none (or one that cannot be read).
pub const DEFAULT_PAGE_SIZE: i64 = 20;
/// The largest page.
pub const MAX_PAGE_SIZE: i64 = 100;

/// The history's query. A key sent twice counts once, its first value: a query is never a
/// 400 here.
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
pub struct HistoryQuery {
    /// Default 1; unreadable or below 1 is 1; sent twice, the first counts.
    pub page: Option<i64>,
    /// Default 20, at most 100; unreadable or below 1 is 20; sent twice, the first counts.
    pub limit: Option<i64>,
}

/// One question and its answer, in both languages.
#[derive(Debug, Serialize, ToSchema)]
pub struct Faq {
    pub question_en: String,
    pub answer_en: String,
    pub question_ar: String,
    pub answer_ar: String,
}

/// The caller's point balance
#[utoipa::path(get, path = "/points",
    responses((status = 200, body = Balance)))]
pub fn get_point_balance() {}

/// The caller's point history, newest first
#[utoipa::path(get, path = "/point-history", params(HistoryQuery),
    responses((status = 200, body = HistoryPage)))]
pub fn get_point_history() {}

/// Points questions and answers
#[utoipa::path(get, path = "/points-faq",
    responses((status = 200, description = "in order", body = [Faq])))]
pub fn get_points_faq() {}
