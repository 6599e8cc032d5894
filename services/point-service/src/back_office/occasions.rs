//! Occasions as the back office changes them: create, change, withdraw, each with its audit
//! row in one transaction that holds the occasion's row (`FOR UPDATE`). The app reads the
//! same rows (`crate::offers`): a change is what it lists next.

use ::back_office::audit::Action;
use back_office::occasions::{OccasionFields, OccasionRecord, OccasionRefusal};
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};

use crate::db::schema::point_occasions;
use crate::error::PointError;
use ::back_office::audit;
use back_office::access::ActingOperator;

/// The columns of [`Row`], in its order.
const COLUMNS: (
    point_occasions::id,
    point_occasions::occasion_en,
    point_occasions::occasion_ar,
    point_occasions::is_custom,
    point_occasions::active,
    point_occasions::created_at,
    point_occasions::updated_at,
) = (
    point_occasions::id,
    point_occasions::occasion_en,
    point_occasions::occasion_ar,
    point_occasions::is_custom,
    point_occasions::active,
    point_occasions::created_at,
    point_occasions::updated_at,
);

type Row = (
    String,
    String,
    Option<String>,
    i16,
    bool,
    DateTime<Utc>,
    DateTime<Utc>,
);

fn record(row: Row) -> OccasionRecord {
    let (id, occasion_en, occasion_ar, is_custom, active, created_at, updated_at) = row;
    OccasionRecord {
        id,
        occasion_en,
        occasion_ar,
        is_custom: is_custom == 1,
        active,
        created_at,
        updated_at,
    }
}

/// Every occasion: the active ones first, then by id.
pub async fn list(conn: &mut AsyncPgConnection) -> QueryResult<Vec<OccasionRecord>> {
    let rows: Vec<Row> = point_occasions::table
        .order((point_occasions::active.desc(), point_occasions::id.asc()))
        .select(COLUMNS)
        .load(conn)
        .await?;
    Ok(rows.into_iter().map(record).collect())
}

pub async fn create(
    conn: &mut AsyncPgConnection,
    operator: &ActingOperator,
    fields: OccasionFields,
) -> Result<OccasionRecord, PointError> {
    let english = fields.occasion_en.ok_or(OccasionRefusal::NoEnglish)?;
    conn.transaction(async |conn| {
        let row: Row = diesel::insert_into(point_occasions::table)
            .values((
                point_occasions::id.eq(super::new_id()),
                point_occasions::occasion_en.eq(&english),
                point_occasions::occasion_ar.eq(fields.occasion_ar.flatten()),
                point_occasions::is_custom.eq(i16::from(fields.is_custom.unwrap_or(false))),
                point_occasions::active.eq(fields.active.unwrap_or(true)),
            ))
            .returning(COLUMNS)
            .get_result(conn)
            .await?;
        Ok(audit::changed(conn, operator, Action::OccasionCreate, None, record(row)).await?)
    })
    .await
}

/// The occasion `id` (sent in either case) locked for a change; `UnknownOccasion` (with the
/// id as sent) when there is none.
async fn lock(conn: &mut AsyncPgConnection, id: &str) -> Result<Row, PointError> {
    let row: Option<Row> = point_occasions::table
        .find(id.to_ascii_lowercase())
        .select(COLUMNS)
        .for_update()
        .first(conn)
        .await
        .optional()?;
    row.ok_or_else(|| OccasionRefusal::UnknownOccasion(id.to_owned()).into())
}

/// Changes the keys `fields` sets; `DELETE` is `active: false` (`Action::OccasionWithdraw`).
pub async fn update(
    conn: &mut AsyncPgConnection,
    operator: &ActingOperator,
    id: &str,
    fields: OccasionFields,
    action: Action,
) -> Result<OccasionRecord, PointError> {
    conn.transaction(async |conn| {
        let current = lock(conn, id).await?;
        if action == Action::OccasionWithdraw && !current.4 {
            // Withdrawn already: answered as it is, nothing recorded (one withdrawal, as for
            // offers and gift-code batches).
            return Ok(record(current));
        }
        let row: Row = diesel::update(point_occasions::table.find(&current.0))
            .set((
                point_occasions::occasion_en.eq(fields.occasion_en.as_ref().unwrap_or(&current.1)),
                point_occasions::occasion_ar
                    .eq(fields.occasion_ar.clone().unwrap_or(current.2.clone())),
                point_occasions::is_custom.eq(fields.is_custom.map_or(current.3, i16::from)),
                point_occasions::active.eq(fields.active.unwrap_or(current.4)),
                point_occasions::updated_at.eq(diesel::dsl::now),
            ))
            .returning(COLUMNS)
            .get_result(conn)
            .await?;
        let before = record(current);
        Ok(audit::changed(conn, operator, action, Some(&before), record(row)).await?)
    })
    .await
}
