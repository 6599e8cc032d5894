//! `point-service seed FILE`: the fixture's `point_settings`, `point_transactions`,
//! `point_offers`, `point_occasions`, `points_faq` and `legacy_point_orders` sections.
//! Rows with an id are upserted by it; ledger rows (which have none) are keyed by their
//! content, so a second run adds nothing; the FAQ is keyed by its position in the list.
//! Amounts of points are read exactly (`9.125` is the decimal 9.125, `server::seed`); a
//! row that breaks a rule is reported by section, index, id and field, and skipped, and the
//! valid rows load.

use std::collections::HashMap;
use std::fmt::Display;

use bigdecimal::BigDecimal;
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::upsert::excluded;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::{Money, ObjectId, Points};
use futures_util::FutureExt;
use serde::Deserialize;
use serde_json::Value;
use server::SeedReport;
use server::seed::{Broken, Row, Section, SeedFuture, rows, upsert_rows, write};
use uuid::Uuid;

use crate::db::schema::{point_occasions, point_offers, point_orders, point_settings, points_faq};
use crate::ledger;

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

/// Refuses zero and negative amounts of points.
fn positive(field: &'static str, points: &Points) -> Result<(), Broken> {
    if points.is_negative() || *points == Points::zero() {
        return Err((
            field,
            format!("must be a positive number of points, got {}", Exact(points)),
        ));
    }
    Ok(())
}

/// An offer's or an order's points, and its price in points when it has one: both positive.
fn amounts(point_amount: &Points, purchased_point_amount: Option<&Points>) -> Result<(), Broken> {
    positive("point_amount", point_amount)?;
    purchased_point_amount.map_or(Ok(()), |price| positive("purchased_point_amount", price))
}

impl Transaction {
    fn check(&self) -> Result<(), Broken> {
        match self.kind {
            Kind::Earn | Kind::Spend => positive("points", &self.points),
            Kind::Adjustment => Ok(()),
        }
    }
}

impl Offer {
    fn check(&self) -> Result<(), Broken> {
        amounts(&self.point_amount, self.purchased_point_amount.as_ref())
    }
}

impl Occasion {
    fn check(&self) -> Result<(), Broken> {
        if !matches!(self.is_custom, 0 | 1) {
            return Err((
                "is_custom",
                format!("must be 0 or 1, got {}", self.is_custom),
            ));
        }
        Ok(())
    }
}

impl LegacyOrder {
    fn check(&self) -> Result<(), Broken> {
        amounts(&self.point_amount, self.purchased_point_amount.as_ref())
    }
}

fn rejected_count(report: &SeedReport, before: usize) -> usize {
    report.rejected.len() - before
}

const OFFERS: Section<Offer> = Section::new("point_offers", "id", Offer::check);
const OCCASIONS: Section<Occasion> = Section::new("point_occasions", "id", Occasion::check);
const LEGACY_ORDERS: Section<LegacyOrder> =
    Section::new("legacy_point_orders", "correlation_id", LegacyOrder::check);

/// Loads the sections inside the caller's transaction.
pub fn load<'c>(conn: &'c mut AsyncPgConnection, fixture: &'c Value) -> SeedFuture<'c> {
    Box::pin(async move {
        let mut report = SeedReport::default();
        if let Some(settings) = fixture.get("point_settings") {
            load_settings(conn, settings, &mut report).await?;
        }
        load_transactions(conn, fixture, &mut report).await?;
        upsert_rows(conn, fixture, &mut report, OFFERS, |conn, offer| {
            let values = (
                point_offers::id.eq(offer.id.as_str()),
                point_offers::point_amount.eq(offer.point_amount.as_decimal()),
                point_offers::purchased_point_amount.eq(decimal(&offer.purchased_point_amount)),
                point_offers::amount.eq(offer.amount.as_decimal()),
                point_offers::sequence.eq(offer.sequence),
                point_offers::legacy_id.eq(offer.legacy_id),
                point_offers::active.eq(offer.active),
                point_offers::deleted.eq(offer.deleted),
            );
            let changes = (values, point_offers::updated_at.eq(diesel::dsl::now));
            server::upsert!(conn, point_offers::table, values, point_offers::id, changes)
        })
        .await?;
        upsert_rows(conn, fixture, &mut report, OCCASIONS, |conn, occasion| {
            let values = (
                point_occasions::id.eq(occasion.id.as_str()),
                point_occasions::occasion_en.eq(&occasion.occasion_en),
                point_occasions::occasion_ar.eq(&occasion.occasion_ar),
                point_occasions::is_custom.eq(occasion.is_custom),
                point_occasions::active.eq(occasion.active),
            );
            let changes = (values, point_occasions::updated_at.eq(diesel::dsl::now));
            let key = point_occasions::id;
            server::upsert!(conn, point_occasions::table, values, key, changes)
        })
        .await?;
        load_faq(conn, fixture, &mut report).await?;
        // Orders copied from the legacy system: no order number, and statuses (`paid`,
        // `AUTHORIZED`) that no route here sets.
        upsert_rows(conn, fixture, &mut report, LEGACY_ORDERS, |conn, order| {
            let values = (
                point_orders::correlation_id.eq(order.correlation_id),
                point_orders::order_no.eq(None::<i64>),
                point_orders::payer_id.eq(order.payer_id.get()),
                point_orders::recipient_id.eq(order.recipient_id.get()),
                point_orders::status.eq(&order.status),
                point_orders::payment_status.eq(&order.payment_status),
                point_orders::point_amount.eq(order.point_amount.as_decimal()),
                point_orders::purchased_point_amount.eq(decimal(&order.purchased_point_amount)),
                point_orders::money_amount.eq(order.money_amount.as_decimal()),
                point_orders::payment_type.eq(&order.payment_type),
                point_orders::order_type.eq(&order.order_type),
            );
            let changes = (values, point_orders::updated_at.eq(diesel::dsl::now));
            let key = point_orders::correlation_id;
            server::upsert!(conn, point_orders::table, values, key, changes)
        })
        .await?;
        Ok(report)
    })
}

/// `point_settings`: an object sets them, `null` unsets them (the balance then has no
/// expiry date).
async fn load_settings(
    conn: &mut AsyncPgConnection,
    settings: &Value,
    report: &mut SeedReport,
) -> anyhow::Result<()> {
    let at = Row::section("point_settings");
    let settings = match server::seed::read::<Option<Settings>>(settings) {
        Ok(settings) => settings,
        Err((field, why)) => {
            report.reject(&at, field.as_deref(), why);
            return Ok(());
        }
    };
    let Some(settings) = settings else {
        diesel::delete(point_settings::table).execute(conn).await?;
        report.line("point_settings: unset");
        return Ok(());
    };
    let (expiry, days) = match (settings.expiry, settings.inactivity_days) {
        (Expiry::Never, days) => ("never", days),
        (Expiry::Inactivity, Some(days)) if days >= 0 => ("inactivity", Some(days)),
        (Expiry::Inactivity, _) => {
            report.reject(
                &at,
                Some("inactivity_days"),
                "expiry inactivity needs inactivity_days >= 0",
            );
            return Ok(());
        }
    };
    let values = (
        point_settings::expiry.eq(expiry),
        point_settings::inactivity_days.eq(days),
    );
    let changes = (
        point_settings::expiry.eq(excluded(point_settings::expiry)),
        point_settings::inactivity_days.eq(excluded(point_settings::inactivity_days)),
        point_settings::updated_at.eq(diesel::dsl::now),
    );
    let written = write(conn, report, &at, |conn| {
        let key = point_settings::singleton;
        server::upsert!(conn, point_settings::table, values, key, changes)
    });
    if written.await?.is_some() {
        report.line(format!("point_settings: {expiry}"));
    }
    Ok(())
}

/// Ledger rows are appended once each: the reference names the row by its content (and
/// its rank among identical rows), so a second run finds them all present. Like every
/// writer, the seed appends through the ledger under the accounts' locks (all taken first,
/// in id order, as a transfer takes its two), so entry ids follow the order in which
/// entries are applied, whatever the job or a spend does meanwhile.
async fn load_transactions(
    conn: &mut AsyncPgConnection,
    fixture: &Value,
    report: &mut SeedReport,
) -> anyhow::Result<()> {
    let before = report.rejected.len();
    let rows = rows::<Transaction>(fixture, "point_transactions", "client_id", report);
    let rows: Vec<_> = rows
        .iter()
        .filter(|(at, row)| match row.check() {
            Ok(()) => true,
            Err((field, why)) => {
                report.reject(at, Some(field), why);
                false
            }
        })
        .collect();
    let client_ids: Vec<i64> = rows.iter().map(|(_, row)| row.client_id.get()).collect();
    let mut accounts: HashMap<i64, ledger::Locked> = ledger::lock_accounts(conn, &client_ids)
        .await?
        .into_iter()
        .map(|account| (account.client_id(), account))
        .collect();
    let mut seen: HashMap<String, usize> = HashMap::new();
    let (mut added_rows, mut present) = (0, 0);
    for (at, row) in rows {
        let points = match row.kind {
            Kind::Spend => -row.points.clone(),
            Kind::Earn | Kind::Adjustment => row.points.clone(),
        };
        // The exact decimal names the row: the points text would round two rows that differ
        // past 4 decimals into one key. Up to 4 decimals both texts are the same, so rows
        // loaded before keep their reference.
        let key = format!(
            "{}:{:?}:{}:{}",
            row.client_id,
            row.kind,
            row.points.as_decimal().normalized().to_plain_string(),
            row.created_at.to_rfc3339()
        );
        let rank = seen.entry(key.clone()).or_default();
        *rank += 1;
        let reference = format!("fixture:{key}:{rank}");
        let client_id = row.client_id.get();
        let Some(account) = accounts.remove(&client_id) else {
            anyhow::bail!("account {client_id} was not locked");
        };
        let (kind, created_at) = (row.kind, row.created_at);
        let written = write(conn, report, at, move |conn| {
            async move {
                let mut account = account;
                let added =
                    append_entry(conn, &mut account, kind, points, &reference, created_at).await?;
                Ok((account, added))
            }
            .boxed()
        });
        // A row the database refused was rolled back with the account it held: lock it again
        // (this transaction holds the lock already) for the balance as it stands.
        let account = match written.await? {
            Some((account, added)) => {
                if added {
                    added_rows += 1;
                } else {
                    present += 1;
                }
                account
            }
            None => ledger::lock_account(conn, client_id).await?,
        };
        accounts.insert(client_id, account);
    }
    let line = match rejected_count(report, before) {
        0 => format!("point_transactions: {added_rows} added ({present} already present)"),
        rejected => format!(
            "point_transactions: {added_rows} added ({present} already present, {rejected} rejected)"
        ),
    };
    report.line(line);
    Ok(())
}

/// Appends a fixture row unless its reference is in the ledger already (checked under the
/// account's lock, which every writer of this client's entries takes); `true` when added.
async fn append_entry(
    conn: &mut AsyncPgConnection,
    account: &mut ledger::Locked,
    kind: Kind,
    points: Points,
    reference: &str,
    created_at: DateTime<Utc>,
) -> QueryResult<bool> {
    if ledger::has_reference(conn, reference).await? {
        return Ok(false);
    }
    let kind = match kind {
        Kind::Earn => ledger::Kind::Earn,
        Kind::Spend => ledger::Kind::Spend,
        Kind::Adjustment => ledger::Kind::Adjustment,
    };
    ledger::append(
        conn,
        account,
        ledger::Entry {
            kind,
            points: points.into_decimal(),
            order: None,
            reference: Some(reference),
            at: Some(created_at),
        },
    )
    .await?;
    Ok(true)
}

/// The FAQ is a list: its entries are keyed by position, and entries past its end removed.
/// A rejected entry's position is emptied too, so the app never shows a stale answer there.
async fn load_faq(
    conn: &mut AsyncPgConnection,
    fixture: &Value,
    report: &mut SeedReport,
) -> anyhow::Result<()> {
    if fixture.get("points_faq").is_none_or(Value::is_null) {
        return Ok(());
    }
    let rows = rows::<Faq>(fixture, "points_faq", "question_en", report);
    if !fixture["points_faq"].is_array() {
        // Reported as a whole by `rows`; the FAQ in the database stays as it was.
        return Ok(());
    }
    let total = fixture["points_faq"].as_array().map_or(0, Vec::len);
    let mut kept = Vec::new();
    for (at, faq) in &rows {
        let position = i32::try_from(at.index.unwrap_or_default())?;
        let values = (
            points_faq::position.eq(position),
            points_faq::question_en.eq(&faq.question_en),
            points_faq::answer_en.eq(&faq.answer_en),
            points_faq::question_ar.eq(&faq.question_ar),
            points_faq::answer_ar.eq(&faq.answer_ar),
        );
        let written = write(conn, report, at, |conn| {
            let key = points_faq::position;
            server::upsert!(conn, points_faq::table, values, key, values)
        });
        if written.await?.is_some() {
            kept.push(position);
        }
    }
    diesel::delete(points_faq::table.filter(points_faq::position.ne_all(&kept)))
        .execute(conn)
        .await?;
    report.line(if kept.len() == total {
        format!("points_faq: {total} entries")
    } else {
        format!("points_faq: {} of {total} entries", kept.len())
    });
    Ok(())
}

/// The exact decimal of optional points, as the column takes it.
fn decimal(points: &Option<Points>) -> Option<&BigDecimal> {
    points.as_ref().map(Points::as_decimal)
}

/// For the report's `got …`: points as their exact decimal.
struct Exact<'a>(&'a Points);

impl Display for Exact<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0.as_decimal().normalized().to_plain_string())
    }
}
