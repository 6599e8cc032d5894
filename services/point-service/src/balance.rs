//! The balance object and the point history (no HTTP in here).

use bigdecimal::BigDecimal;
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::{PageMeta, Points};
use relayed_routes::points::{Balance, HistoryEntry, HistoryPage};
use uuid::Uuid;

use crate::db::schema::point_entries;
use crate::{expiry, ledger, riyadh};

pub async fn balance(conn: &mut AsyncPgConnection, client_id: i64) -> QueryResult<Balance> {
    let points = ledger::balance(conn, client_id).await?.unwrap_or_default();
    Ok(Balance {
        id: client_id.to_string(),
        user_id: client_id.to_string(),
        points: Points::new(points).to_text(),
        // `expiry::rule::date`: after the points expired it still names the date they
        // expired on; only a new earn moves it.
        points_expiration_date: expiry::rule::date(conn, client_id).await?.map(riyadh::text),
    })
}

/// A history line as stored: id, kind, signed change, order, time.
type EntryRow = (i64, String, BigDecimal, Option<Uuid>, DateTime<Utc>);

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
    let rows: Vec<EntryRow> = point_entries::table
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
    let data = rows
        .into_iter()
        .map(
            |(id, kind, points, correlation_id, created_at)| HistoryEntry {
                id,
                kind,
                points,
                correlation_id,
                created_at,
            },
        )
        .collect();
    Ok(HistoryPage {
        data,
        meta: PageMeta::new(page, limit, total_items),
    })
}
