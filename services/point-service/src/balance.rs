//! The balance object and the point history (no HTTP in here).

use bigdecimal::BigDecimal;
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::{PageMeta, Points};
use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::db::schema::point_entries;
use crate::{expiry, ledger, riyadh};

/// The balance, bare, in the spec's key order.
#[derive(Debug, Serialize, PartialEq, Eq, ToSchema)]
pub struct Balance {
    /// The client id as text.
    pub id: String,
    pub user_id: String,
    /// At most 4 decimals, no trailing zeros or dot; `0` with no account; may be negative.
    pub points: String,
    /// `YYYY-MM-DD` in Asia/Riyadh, or null (`expiry::date`). After the points expired it
    /// still names the date they expired on: only a new earn moves it.
    #[serde(rename = "pointsExpirationDate")]
    pub points_expiration_date: Option<String>,
}

pub async fn balance(conn: &mut AsyncPgConnection, client_id: i64) -> QueryResult<Balance> {
    let points = ledger::balance(conn, client_id).await?.unwrap_or_default();
    Ok(Balance {
        id: client_id.to_string(),
        user_id: client_id.to_string(),
        points: Points::new(points).to_text(),
        points_expiration_date: expiry::date(conn, client_id).await?.map(riyadh::text),
    })
}

/// One line of the history.
#[derive(Debug, Serialize, Queryable, ToSchema)]
pub struct HistoryEntry {
    pub id: i64,
    /// The ledger's kind as stored: earn, spend, gift_sent, gift_received, purchase,
    /// gift_card_credit, adjustment, expiry. An expiry is listed like every other entry, by
    /// its kind and its signed change (the negative balance it took), so that the history
    /// still adds up to the balance; no kind is renamed or hidden for the app.
    pub kind: String,
    /// The signed change, as points text.
    #[serde(serialize_with = "points_text")]
    #[schema(value_type = String)]
    pub points: BigDecimal,
    pub correlation_id: Option<Uuid>,
    pub created_at: DateTime<Utc>,
}

fn points_text<S: serde::Serializer>(value: &BigDecimal, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(&Points::new(value.clone()).to_text())
}

/// A page of the history, newest first.
#[derive(Debug, Serialize, ToSchema)]
pub struct HistoryPage {
    pub data: Vec<HistoryEntry>,
    pub meta: PageMeta,
}

pub const DEFAULT_PAGE_SIZE: i64 = 20;
pub const MAX_PAGE_SIZE: i64 = 100;

pub async fn history(
    conn: &mut AsyncPgConnection,
    client_id: i64,
    page: i64,
    limit: i64,
) -> QueryResult<HistoryPage> {
    let total_items: i64 = point_entries::table
        .filter(point_entries::client_id.eq(client_id))
        .count()
        .get_result(conn)
        .await?;
    let data = point_entries::table
        .filter(point_entries::client_id.eq(client_id))
        .order((point_entries::created_at.desc(), point_entries::id.desc()))
        .limit(limit)
        .offset((page - 1).saturating_mul(limit))
        .select((
            point_entries::id,
            point_entries::kind,
            point_entries::points,
            point_entries::order_correlation_id,
            point_entries::created_at,
        ))
        .load(conn)
        .await?;
    Ok(HistoryPage {
        data,
        meta: PageMeta::new(page, limit, total_items),
    })
}
