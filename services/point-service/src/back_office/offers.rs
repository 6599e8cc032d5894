//! Offers as the back office changes them: create, change, withdraw, each with its audit
//! row in one transaction that holds the offer's row (`FOR UPDATE`), so two operators
//! changing one offer at once each see the other's change and the audit's before/after
//! chain has no gap. The app reads the same rows (`crate::offers`): a change is what it
//! lists next, and an order names the offer as it was when the order was made.

use ::back_office::audit::Action;
use back_office::offers::{OfferFields, OfferRecord, OfferRefusal, OfferValues};
use bigdecimal::BigDecimal;
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use domain::Money;

use crate::db::schema::point_offers;
use crate::error::PointError;
use ::back_office::audit;
use back_office::access::ActingOperator;

/// The columns of [`Row`], in its order.
const COLUMNS: (
    point_offers::id,
    point_offers::point_amount,
    point_offers::purchased_point_amount,
    point_offers::amount,
    point_offers::sequence,
    point_offers::active,
    point_offers::deleted,
    point_offers::created_at,
    point_offers::updated_at,
) = (
    point_offers::id,
    point_offers::point_amount,
    point_offers::purchased_point_amount,
    point_offers::amount,
    point_offers::sequence,
    point_offers::active,
    point_offers::deleted,
    point_offers::created_at,
    point_offers::updated_at,
);

type Row = (
    String,
    BigDecimal,
    Option<BigDecimal>,
    BigDecimal,
    Option<i32>,
    bool,
    bool,
    DateTime<Utc>,
    DateTime<Utc>,
);

fn record(row: Row) -> OfferRecord {
    let (id, point_amount, purchased, amount, sequence, active, deleted, created_at, updated_at) =
        row;
    OfferRecord {
        id,
        point_amount: back_office::decimal_text(&point_amount),
        purchased_point_amount: purchased.as_ref().map(back_office::decimal_text),
        // The column is NUMERIC(12, 2): always two decimals, never rounded here.
        amount: Money::new(amount.clone())
            .map_or_else(|_| amount.to_plain_string(), |money| money.to_text()),
        sequence,
        active,
        withdrawn: deleted,
        created_at,
        updated_at,
    }
}

fn values(row: &Row) -> OfferValues {
    OfferValues {
        point_amount: row.1.clone(),
        purchased_point_amount: row.2.clone(),
        amount: row.3.clone(),
        sequence: row.4,
        active: row.5,
    }
}

/// Every offer: those not withdrawn first; then as the app lists them (sequence, legacy id,
/// id; missing ones last).
pub async fn list(conn: &mut AsyncPgConnection) -> QueryResult<Vec<OfferRecord>> {
    let rows: Vec<Row> = point_offers::table
        .order((
            point_offers::deleted.asc(),
            point_offers::sequence.asc().nulls_last(),
            point_offers::legacy_id.asc().nulls_last(),
            point_offers::id.asc(),
        ))
        .select(COLUMNS)
        .load(conn)
        .await?;
    Ok(rows.into_iter().map(record).collect())
}

pub async fn create(
    conn: &mut AsyncPgConnection,
    operator: &ActingOperator,
    offer: OfferValues,
) -> Result<OfferRecord, PointError> {
    conn.transaction(async |conn| {
        let row: Row = diesel::insert_into(point_offers::table)
            .values((
                point_offers::id.eq(super::new_id()),
                point_offers::point_amount.eq(&offer.point_amount),
                point_offers::purchased_point_amount.eq(&offer.purchased_point_amount),
                point_offers::amount.eq(&offer.amount),
                point_offers::sequence.eq(offer.sequence),
                point_offers::active.eq(offer.active),
            ))
            .returning(COLUMNS)
            .get_result(conn)
            .await?;
        Ok(audit::changed(conn, operator, Action::OfferCreate, None, record(row)).await?)
    })
    .await
}

/// The offer `id` (sent in either case) locked for a change; `UnknownOffer` (with the id as
/// sent) when there is none, `Withdrawn` when it was withdrawn.
async fn lock(conn: &mut AsyncPgConnection, id: &str) -> Result<Row, PointError> {
    let row = lock_any(conn, id).await?;
    if row.6 {
        return Err(OfferRefusal::Withdrawn(id.to_owned()).into());
    }
    Ok(row)
}

/// The offer's row, locked, withdrawn or not.
async fn lock_any(conn: &mut AsyncPgConnection, id: &str) -> Result<Row, PointError> {
    let row: Option<Row> = point_offers::table
        .find(id.to_ascii_lowercase())
        .select(COLUMNS)
        .for_update()
        .first(conn)
        .await
        .optional()?;
    Ok(row.ok_or_else(|| OfferRefusal::UnknownOffer(id.to_owned()))?)
}

pub async fn update(
    conn: &mut AsyncPgConnection,
    operator: &ActingOperator,
    id: &str,
    change: OfferFields,
) -> Result<OfferRecord, PointError> {
    conn.transaction(async |conn| {
        let current = lock(conn, id).await?;
        let offer = change.applied_to(&values(&current))?;
        let row: Row = diesel::update(point_offers::table.find(&current.0))
            .set((
                point_offers::point_amount.eq(&offer.point_amount),
                point_offers::purchased_point_amount.eq(&offer.purchased_point_amount),
                point_offers::amount.eq(&offer.amount),
                point_offers::sequence.eq(offer.sequence),
                point_offers::active.eq(offer.active),
                point_offers::updated_at.eq(diesel::dsl::now),
            ))
            .returning(COLUMNS)
            .get_result(conn)
            .await?;
        let before = record(current);
        Ok(audit::changed(
            conn,
            operator,
            Action::OfferUpdate,
            Some(&before),
            record(row),
        )
        .await?)
    })
    .await
}

/// Withdraws an offer for good: never on sale again, kept for the orders that name it. An
/// offer already withdrawn is answered as it is, and nothing is recorded: withdrawing twice
/// is one withdrawal, as for occasions and gift-code batches.
pub async fn withdraw(
    conn: &mut AsyncPgConnection,
    operator: &ActingOperator,
    id: &str,
) -> Result<OfferRecord, PointError> {
    conn.transaction(async |conn| {
        let current = lock_any(conn, id).await?;
        if current.6 {
            return Ok(record(current));
        }
        let row: Row = diesel::update(point_offers::table.find(&current.0))
            .set((
                point_offers::active.eq(false),
                point_offers::deleted.eq(true),
                point_offers::updated_at.eq(diesel::dsl::now),
            ))
            .returning(COLUMNS)
            .get_result(conn)
            .await?;
        let before = record(current);
        Ok(audit::changed(
            conn,
            operator,
            Action::OfferWithdraw,
            Some(&before),
            record(row),
        )
        .await?)
    })
    .await
}
