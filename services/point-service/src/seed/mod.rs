//! `point-service seed FILE`: the fixture's `point_settings`, `point_transactions`,
//! `point_offers`, `point_occasions`, `points_faq` and `legacy_point_orders` sections.
//! Rows with an id are upserted by it; ledger rows (which have none) are keyed by their
//! content, so a second run adds nothing; the FAQ is keyed by its position in the list.
//! Amounts of points are read exactly (`9.125` is the decimal 9.125, `server::seed`); a
//! row that breaks a rule is reported by section, index, id and field, and skipped, and the
//! valid rows load.

mod sections;
mod transactions;

use bigdecimal::BigDecimal;
use diesel::prelude::*;
use diesel::upsert::excluded;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::Points;
use serde_json::Value;
use server::SeedReport;
use server::seed::{Row, Section, SeedFuture, rows, upsert_rows, write};

use self::sections::{Expiry, Faq, LegacyOrder, Occasion, Offer, Settings};
use self::transactions::load_transactions;
use crate::db::schema::{point_occasions, point_offers, point_orders, point_settings, points_faq};

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
        // A new version only when the settings change (`back_office::expiry_policy`).
        point_settings::version.eq(diesel::dsl::sql::<diesel::sql_types::Integer>(
            "CASE WHEN point_settings.expiry IS DISTINCT FROM excluded.expiry \
                   OR point_settings.inactivity_days IS DISTINCT FROM excluded.inactivity_days \
             THEN nextval('point_settings_version')::integer ELSE point_settings.version END",
        )),
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
