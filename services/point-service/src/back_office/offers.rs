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

use super::offer_limit::Passed;
use crate::db::schema::point_offers;
use crate::error::PointError;
use ::back_office::audit;
use back_office::access::ActingOperator;

/// An offer's row, as the back office reads and writes it.
#[derive(Queryable, Selectable)]
#[diesel(table_name = point_offers, check_for_backend(diesel::pg::Pg))]
struct Row {
    id: String,
    point_amount: BigDecimal,
    purchased_point_amount: Option<BigDecimal>,
    amount: BigDecimal,
    sequence: Option<i32>,
    active: bool,
    deleted: bool,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

fn record(row: Row) -> OfferRecord {
    let amount = row.amount;
    OfferRecord {
        id: row.id,
        point_amount: back_office::decimal_text(&row.point_amount),
        purchased_point_amount: row
            .purchased_point_amount
            .as_ref()
            .map(back_office::decimal_text),
        // The column is NUMERIC(12, 2): always two decimals, never rounded here.
        amount: Money::new(amount.clone())
            .map_or_else(|_| amount.to_plain_string(), |money| money.to_text()),
        sequence: row.sequence,
        active: row.active,
        withdrawn: row.deleted,
        created_at: row.created_at,
        updated_at: row.updated_at,
    }
}

fn values(row: &Row) -> OfferValues {
    OfferValues {
        point_amount: row.point_amount.clone(),
        purchased_point_amount: row.purchased_point_amount.clone(),
        amount: row.amount.clone(),
        sequence: row.sequence,
        active: row.active,
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
        .select(Row::as_select())
        .load(conn)
        .await?;
    Ok(rows.into_iter().map(record).collect())
}

/// A new offer; `limit` is `OFFER_MAX_POINTS_PER_SAR` ([`super::offer_limit`]).
pub async fn create(
    conn: &mut AsyncPgConnection,
    operator: &ActingOperator,
    offer: OfferValues,
    limit: Option<&BigDecimal>,
) -> Result<OfferRecord, PointError> {
    let changed = conn
        .transaction(async |conn| {
            let passed = super::offer_limit::hold(conn, operator, &offer, None, limit).await?;
            let row: Row = diesel::insert_into(point_offers::table)
                .values((
                    point_offers::id.eq(super::new_id()),
                    point_offers::point_amount.eq(&offer.point_amount),
                    point_offers::purchased_point_amount.eq(&offer.purchased_point_amount),
                    point_offers::amount.eq(&offer.amount),
                    point_offers::sequence.eq(offer.sequence),
                    point_offers::active.eq(offer.active),
                ))
                .returning(Row::as_returning())
                .get_result(conn)
                .await?;
            let made =
                audit::changed(conn, operator, Action::OfferCreate, None, record(row)).await?;
            Ok::<_, PointError>((made, passed))
        })
        .await?;
    Ok(committed(operator, changed))
}

/// The offer `id` (sent in either case) locked for a change; `UnknownOffer` (with the id as
/// sent) when there is none, `Withdrawn` when it was withdrawn.
async fn lock(conn: &mut AsyncPgConnection, id: &str) -> Result<Row, PointError> {
    let row = lock_any(conn, id).await?;
    if row.deleted {
        return Err(OfferRefusal::Withdrawn(id.to_owned()).into());
    }
    Ok(row)
}

/// The offer's row, locked, withdrawn or not.
async fn lock_any(conn: &mut AsyncPgConnection, id: &str) -> Result<Row, PointError> {
    let row: Option<Row> = point_offers::table
        .find(id.to_ascii_lowercase())
        .select(Row::as_select())
        .for_update()
        .first(conn)
        .await
        .optional()?;
    Ok(row.ok_or_else(|| OfferRefusal::UnknownOffer(id.to_owned()))?)
}

/// The offer `id` changed; `limit` as for [`create`].
pub async fn update(
    conn: &mut AsyncPgConnection,
    operator: &ActingOperator,
    id: &str,
    change: OfferFields,
    limit: Option<&BigDecimal>,
) -> Result<OfferRecord, PointError> {
    let changed = conn
        .transaction(async |conn| {
            let current = lock(conn, id).await?;
            let before = values(&current);
            let offer = change.applied_to(&before)?;
            let passed =
                super::offer_limit::hold(conn, operator, &offer, Some(&before), limit).await?;
            let row: Row = diesel::update(point_offers::table.find(&current.id))
                .set((
                    point_offers::point_amount.eq(&offer.point_amount),
                    point_offers::purchased_point_amount.eq(&offer.purchased_point_amount),
                    point_offers::amount.eq(&offer.amount),
                    point_offers::sequence.eq(offer.sequence),
                    point_offers::active.eq(offer.active),
                    point_offers::updated_at.eq(diesel::dsl::now),
                ))
                .returning(Row::as_returning())
                .get_result(conn)
                .await?;
            let made = recorded(conn, operator, Action::OfferUpdate, current, row).await?;
            Ok::<_, PointError>((made, passed))
        })
        .await?;
    Ok(committed(operator, changed))
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
        if current.deleted {
            return Ok(record(current));
        }
        let row: Row = diesel::update(point_offers::table.find(&current.id))
            .set((
                point_offers::active.eq(false),
                point_offers::deleted.eq(true),
                point_offers::updated_at.eq(diesel::dsl::now),
            ))
            .returning(Row::as_returning())
            .get_result(conn)
            .await?;
        recorded(conn, operator, Action::OfferWithdraw, current, row).await
    })
    .await
}

/// The offer a committed create or update made. A super_admin's pass of the limit is counted
/// and logged ([`Passed::made`]) only here, after the commit, so that a change rolled back
/// passed nothing.
fn committed(
    operator: &ActingOperator,
    (made, passed): (OfferRecord, Option<Passed>),
) -> OfferRecord {
    if let Some(passed) = passed {
        passed.made(operator);
    }
    made
}

/// Records the change of the offer from `before` to `after` in the trail; answers `after`.
async fn recorded(
    conn: &mut AsyncPgConnection,
    operator: &ActingOperator,
    action: Action,
    before: Row,
    after: Row,
) -> Result<OfferRecord, PointError> {
    let before = record(before);
    Ok(audit::changed(conn, operator, action, Some(&before), record(after)).await?)
}
