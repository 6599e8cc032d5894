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

/// An occasion's row, as the back office reads and writes it.
#[derive(Queryable, Selectable)]
#[diesel(table_name = point_occasions, check_for_backend(diesel::pg::Pg))]
struct Row {
    id: String,
    occasion_en: String,
    occasion_ar: Option<String>,
    is_custom: i16,
    active: bool,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

fn record(row: Row) -> OccasionRecord {
    OccasionRecord {
        id: row.id,
        occasion_en: row.occasion_en,
        occasion_ar: row.occasion_ar,
        is_custom: row.is_custom == 1,
        active: row.active,
        created_at: row.created_at,
        updated_at: row.updated_at,
    }
}

/// Every occasion: the active ones first, then by id.
pub async fn list(conn: &mut AsyncPgConnection) -> QueryResult<Vec<OccasionRecord>> {
    let rows: Vec<Row> = point_occasions::table
        .order((point_occasions::active.desc(), point_occasions::id.asc()))
        .select(Row::as_select())
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
            .returning(Row::as_returning())
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
        .select(Row::as_select())
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
        if action == Action::OccasionWithdraw && !current.active {
            // Withdrawn already: answered as it is, nothing recorded (one withdrawal, as for
            // offers and gift-code batches).
            return Ok(record(current));
        }
        let row: Row = diesel::update(point_occasions::table.find(&current.id))
            .set((
                point_occasions::occasion_en
                    .eq(fields.occasion_en.as_ref().unwrap_or(&current.occasion_en)),
                point_occasions::occasion_ar.eq(fields
                    .occasion_ar
                    .clone()
                    .unwrap_or(current.occasion_ar.clone())),
                point_occasions::is_custom
                    .eq(fields.is_custom.map_or(current.is_custom, i16::from)),
                point_occasions::active.eq(fields.active.unwrap_or(current.active)),
                point_occasions::updated_at.eq(diesel::dsl::now),
            ))
            .returning(Row::as_returning())
            .get_result(conn)
            .await?;
        let before = record(current);
        Ok(audit::changed(conn, operator, action, Some(&before), record(row)).await?)
    })
    .await
}
