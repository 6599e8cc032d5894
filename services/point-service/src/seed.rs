//! `point-service seed FILE`: the fixture's `point_settings`, `point_transactions`,
//! `point_offers`, `point_occasions`, `points_faq` and `legacy_point_orders` sections.
//! Rows with an id are upserted by it; ledger rows (which have none) are keyed by their
//! content, so a second run adds nothing; the FAQ is keyed by its position in the list.

use std::collections::{BTreeSet, HashMap};

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::upsert::excluded;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::{Money, ObjectId, Points};
use futures_util::future::BoxFuture;
use serde::Deserialize;
use uuid::Uuid;

use crate::db::schema::{
    point_accounts, point_entries, point_occasions, point_offers, point_orders, point_settings,
    points_faq,
};

#[derive(Deserialize)]
struct Fixture {
    /// Absent: untouched. `null`: unset (the balance then has no expiry date).
    #[serde(default, deserialize_with = "present")]
    point_settings: Option<Option<Settings>>,
    #[serde(default)]
    point_transactions: Vec<Transaction>,
    #[serde(default)]
    point_offers: Vec<Offer>,
    #[serde(default)]
    point_occasions: Vec<Occasion>,
    #[serde(default)]
    points_faq: Option<Vec<Faq>>,
    #[serde(default)]
    legacy_point_orders: Vec<LegacyOrder>,
}

/// Tells an absent key (`None`) from an explicit `null` (`Some(None)`).
fn present<'de, D: serde::Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
) -> Result<Option<Option<T>>, D::Error> {
    Option::<T>::deserialize(d).map(Some)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Settings {
    expiry: Expiry,
    inactivity_days: Option<i32>,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "lowercase")]
enum Expiry {
    Never,
    Inactivity,
}

#[derive(Deserialize)]
struct Transaction {
    client_id: domain::ClientId,
    kind: Kind,
    points: Points,
    created_at: DateTime<Utc>,
}

#[derive(Deserialize, Clone, Copy, PartialEq, Eq, Debug)]
#[serde(rename_all = "lowercase")]
enum Kind {
    Earn,
    Spend,
    Adjustment,
}

#[derive(Deserialize)]
struct Offer {
    id: ObjectId,
    point_amount: Points,
    purchased_point_amount: Option<Points>,
    amount: Money,
    sequence: Option<i32>,
    legacy_id: Option<i32>,
    #[serde(default = "yes")]
    active: bool,
    #[serde(default)]
    deleted: bool,
}

#[derive(Deserialize)]
struct Occasion {
    id: ObjectId,
    occasion_en: String,
    occasion_ar: Option<String>,
    #[serde(default)]
    is_custom: i16,
    #[serde(default = "yes")]
    active: bool,
}

#[derive(Deserialize)]
struct Faq {
    question_en: String,
    answer_en: String,
    question_ar: String,
    answer_ar: String,
}

#[derive(Deserialize)]
struct LegacyOrder {
    correlation_id: Uuid,
    payer_id: domain::ClientId,
    recipient_id: domain::ClientId,
    status: String,
    payment_status: Option<String>,
    point_amount: Points,
    purchased_point_amount: Option<Points>,
    money_amount: Money,
    payment_type: String,
    order_type: String,
}

fn yes() -> bool {
    true
}

/// Loads the sections inside the caller's transaction.
pub fn load<'c>(
    conn: &'c mut AsyncPgConnection,
    fixture: &'c serde_json::Value,
) -> BoxFuture<'c, anyhow::Result<Vec<String>>> {
    Box::pin(async move {
        let fixture = Fixture::deserialize(fixture)?;
        let mut report = Vec::new();
        if let Some(settings) = &fixture.point_settings {
            report.push(load_settings(conn, settings.as_ref()).await?);
        }
        report.push(load_transactions(conn, &fixture.point_transactions).await?);
        report.push(load_offers(conn, &fixture.point_offers).await?);
        report.push(load_occasions(conn, &fixture.point_occasions).await?);
        if let Some(faq) = &fixture.points_faq {
            report.push(load_faq(conn, faq).await?);
        }
        report.push(load_legacy_orders(conn, &fixture.legacy_point_orders).await?);
        Ok(report)
    })
}

async fn load_settings(
    conn: &mut AsyncPgConnection,
    settings: Option<&Settings>,
) -> anyhow::Result<String> {
    let Some(settings) = settings else {
        diesel::delete(point_settings::table).execute(conn).await?;
        return Ok("point_settings: unset".to_owned());
    };
    let (expiry, days) = match (settings.expiry, settings.inactivity_days) {
        (Expiry::Never, days) => ("never", days),
        (Expiry::Inactivity, Some(days)) if days >= 0 => ("inactivity", Some(days)),
        (Expiry::Inactivity, _) => {
            anyhow::bail!("point_settings: expiry inactivity needs inactivity_days >= 0")
        }
    };
    diesel::insert_into(point_settings::table)
        .values((
            point_settings::expiry.eq(expiry),
            point_settings::inactivity_days.eq(days),
        ))
        .on_conflict(point_settings::singleton)
        .do_update()
        .set((
            point_settings::expiry.eq(excluded(point_settings::expiry)),
            point_settings::inactivity_days.eq(excluded(point_settings::inactivity_days)),
            point_settings::updated_at.eq(diesel::dsl::now),
        ))
        .execute(conn)
        .await?;
    Ok(format!("point_settings: {expiry}"))
}

/// Ledger rows are appended once each: the reference names the row by its content (and
/// its rank among identical rows), so a second run finds them all present. Balances are
/// then recomputed from the entries of the accounts touched.
async fn load_transactions(
    conn: &mut AsyncPgConnection,
    rows: &[Transaction],
) -> anyhow::Result<String> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut accounts = BTreeSet::new();
    let mut added = 0;
    for (i, row) in rows.iter().enumerate() {
        let points = match row.kind {
            Kind::Earn | Kind::Spend
                if row.points.is_negative() || row.points == Points::zero() =>
            {
                anyhow::bail!(
                    "point_transactions[{i}]: {:?} points must be positive",
                    row.kind
                )
            }
            Kind::Spend => -row.points.clone(),
            Kind::Earn | Kind::Adjustment => row.points.clone(),
        };
        let key = format!(
            "{}:{:?}:{}:{}",
            row.client_id,
            row.kind,
            row.points,
            row.created_at.to_rfc3339()
        );
        let rank = seen.entry(key.clone()).or_default();
        *rank += 1;
        let reference = format!("fixture:{key}:{rank}");
        let client_id = row.client_id.get();
        accounts.insert(client_id);
        diesel::insert_into(point_accounts::table)
            .values(point_accounts::client_id.eq(client_id))
            .on_conflict_do_nothing()
            .execute(conn)
            .await?;
        added += diesel::insert_into(point_entries::table)
            .values((
                point_entries::client_id.eq(client_id),
                point_entries::kind.eq(format!("{:?}", row.kind).to_lowercase()),
                point_entries::points.eq(points.into_decimal()),
                point_entries::reference.eq(reference),
                point_entries::created_at.eq(row.created_at),
            ))
            .on_conflict(point_entries::reference)
            .do_nothing()
            .execute(conn)
            .await
            .map_err(|e| anyhow::anyhow!("point_transactions[{i}]: {e}"))?;
    }
    let accounts: Vec<i64> = accounts.into_iter().collect();
    diesel::sql_query(
        "UPDATE point_accounts a SET balance = COALESCE((SELECT sum(e.points) FROM point_entries e \
         WHERE e.client_id = a.client_id), 0), updated_at = now() WHERE a.client_id = ANY($1)",
    )
    .bind::<diesel::sql_types::Array<diesel::sql_types::BigInt>, _>(&accounts)
    .execute(conn)
    .await?;
    Ok(format!(
        "point_transactions: {added} added ({} already present)",
        rows.len() - added
    ))
}

async fn load_offers(conn: &mut AsyncPgConnection, rows: &[Offer]) -> anyhow::Result<String> {
    for (i, offer) in rows.iter().enumerate() {
        let values = (
            point_offers::id.eq(offer.id.as_str()),
            point_offers::point_amount.eq(offer.point_amount.as_decimal()),
            point_offers::purchased_point_amount.eq(offer
                .purchased_point_amount
                .as_ref()
                .map(Points::as_decimal)),
            point_offers::amount.eq(offer.amount.as_decimal()),
            point_offers::sequence.eq(offer.sequence),
            point_offers::legacy_id.eq(offer.legacy_id),
            point_offers::active.eq(offer.active),
            point_offers::deleted.eq(offer.deleted),
        );
        diesel::insert_into(point_offers::table)
            .values(values)
            .on_conflict(point_offers::id)
            .do_update()
            .set((values, point_offers::updated_at.eq(diesel::dsl::now)))
            .execute(conn)
            .await
            .map_err(|e| anyhow::anyhow!("point_offers[{i}] ({}): {e}", offer.id))?;
    }
    Ok(format!("point_offers: {} upserted", rows.len()))
}

async fn load_occasions(conn: &mut AsyncPgConnection, rows: &[Occasion]) -> anyhow::Result<String> {
    for (i, occasion) in rows.iter().enumerate() {
        if !matches!(occasion.is_custom, 0 | 1) {
            anyhow::bail!("point_occasions[{i}]: is_custom must be 0 or 1");
        }
        let values = (
            point_occasions::id.eq(occasion.id.as_str()),
            point_occasions::occasion_en.eq(&occasion.occasion_en),
            point_occasions::occasion_ar.eq(&occasion.occasion_ar),
            point_occasions::is_custom.eq(occasion.is_custom),
            point_occasions::active.eq(occasion.active),
        );
        diesel::insert_into(point_occasions::table)
            .values(values)
            .on_conflict(point_occasions::id)
            .do_update()
            .set((values, point_occasions::updated_at.eq(diesel::dsl::now)))
            .execute(conn)
            .await
            .map_err(|e| anyhow::anyhow!("point_occasions[{i}] ({}): {e}", occasion.id))?;
    }
    Ok(format!("point_occasions: {} upserted", rows.len()))
}

/// The FAQ is a list: its entries are keyed by position and entries past its end removed.
async fn load_faq(conn: &mut AsyncPgConnection, rows: &[Faq]) -> anyhow::Result<String> {
    for (position, faq) in (0_i32..).zip(rows) {
        let values = (
            points_faq::position.eq(position),
            points_faq::question_en.eq(&faq.question_en),
            points_faq::answer_en.eq(&faq.answer_en),
            points_faq::question_ar.eq(&faq.question_ar),
            points_faq::answer_ar.eq(&faq.answer_ar),
        );
        diesel::insert_into(points_faq::table)
            .values(values)
            .on_conflict(points_faq::position)
            .do_update()
            .set(values)
            .execute(conn)
            .await?;
    }
    let len = i32::try_from(rows.len())?;
    diesel::delete(points_faq::table.filter(points_faq::position.ge(len)))
        .execute(conn)
        .await?;
    Ok(format!("points_faq: {} entries", rows.len()))
}

/// Orders copied from the legacy system: no order number, and statuses (`paid`,
/// `AUTHORIZED`) that no route here sets.
async fn load_legacy_orders(
    conn: &mut AsyncPgConnection,
    rows: &[LegacyOrder],
) -> anyhow::Result<String> {
    for (i, order) in rows.iter().enumerate() {
        let values = (
            point_orders::correlation_id.eq(order.correlation_id),
            point_orders::order_no.eq(None::<i64>),
            point_orders::payer_id.eq(order.payer_id.get()),
            point_orders::recipient_id.eq(order.recipient_id.get()),
            point_orders::status.eq(&order.status),
            point_orders::payment_status.eq(&order.payment_status),
            point_orders::point_amount.eq(order.point_amount.as_decimal()),
            point_orders::purchased_point_amount.eq(order
                .purchased_point_amount
                .as_ref()
                .map(Points::as_decimal)),
            point_orders::money_amount.eq(order.money_amount.as_decimal()),
            point_orders::payment_type.eq(&order.payment_type),
            point_orders::order_type.eq(&order.order_type),
        );
        diesel::insert_into(point_orders::table)
            .values(values)
            .on_conflict(point_orders::correlation_id)
            .do_update()
            .set((values, point_orders::updated_at.eq(diesel::dsl::now)))
            .execute(conn)
            .await
            .map_err(|e| {
                anyhow::anyhow!("legacy_point_orders[{i}] ({}): {e}", order.correlation_id)
            })?;
    }
    Ok(format!("legacy_point_orders: {} upserted", rows.len()))
}
