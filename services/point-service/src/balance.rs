//! The balance object and the point history (no HTTP in here).

use bigdecimal::BigDecimal;
use chrono::{DateTime, Days, Utc};
use chrono_tz::Asia::Riyadh;
use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::{PageMeta, Points};
use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::db::schema::{point_entries, point_settings};
use crate::ledger;

/// The balance, bare, in the spec's key order.
#[derive(Debug, Serialize, PartialEq, Eq, ToSchema)]
pub struct Balance {
    /// The client id as text.
    pub id: String,
    pub user_id: String,
    /// At most 4 decimals, no trailing zeros or dot; `0` with no account; may be negative.
    pub points: String,
    /// `YYYY-MM-DD` in Asia/Riyadh, or null.
    #[serde(rename = "pointsExpirationDate")]
    pub points_expiration_date: Option<String>,
}

/// The expiry date: the newest earn row's date in Riyadh plus the inactivity days; none
/// when the settings say never, are unset, or the client has no earn row.
pub fn expiry_date(
    newest_earn: Option<DateTime<Utc>>,
    inactivity_days: Option<i32>,
) -> Option<String> {
    let days = u64::try_from(inactivity_days?).ok()?;
    let earned = newest_earn?.with_timezone(&Riyadh).date_naive();
    earned
        .checked_add_days(Days::new(days))
        .map(|d| d.format("%Y-%m-%d").to_string())
}

pub async fn balance(conn: &mut AsyncPgConnection, client_id: i64) -> QueryResult<Balance> {
    let points = ledger::balance(conn, client_id).await?.unwrap_or_default();
    let settings: Option<(String, Option<i32>)> = point_settings::table
        .select((point_settings::expiry, point_settings::inactivity_days))
        .first(conn)
        .await
        .optional()?;
    let inactivity_days = match settings {
        Some((expiry, days)) if expiry == "inactivity" => days,
        _ => None,
    };
    let newest_earn = match inactivity_days {
        None => None,
        Some(_) => {
            point_entries::table
                .filter(
                    point_entries::client_id
                        .eq(client_id)
                        .and(point_entries::kind.eq("earn")),
                )
                .select(diesel::dsl::max(point_entries::created_at))
                .first::<Option<DateTime<Utc>>>(conn)
                .await?
        }
    };
    Ok(Balance {
        id: client_id.to_string(),
        user_id: client_id.to_string(),
        points: Points::new(points).to_text(),
        points_expiration_date: expiry_date(newest_earn, inactivity_days),
    })
}

/// One line of the history.
#[derive(Debug, Serialize, Queryable, ToSchema)]
pub struct HistoryEntry {
    pub id: i64,
    /// earn, spend, gift_sent, gift_received, purchase, gift_card_credit, adjustment.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expiry_counts_from_the_riyadh_date_of_the_newest_earn() {
        // 22:00 UTC on 31 Dec is already 1 Jan in Riyadh (UTC+3).
        let earned = "2026-12-31T22:00:00Z".parse::<DateTime<Utc>>().unwrap();
        assert_eq!(
            expiry_date(Some(earned), Some(365)),
            Some("2028-01-01".into())
        );
        assert_eq!(expiry_date(Some(earned), None), None);
        assert_eq!(expiry_date(None, Some(365)), None);
        assert_eq!(
            expiry_date(Some(earned), Some(0)),
            Some("2027-01-01".into())
        );
    }
}
