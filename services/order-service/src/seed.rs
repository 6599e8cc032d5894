//! `order-service seed FILE`: the fixture's `point_rates`, `gift_card_codes`, `stores` and
//! `banners` sections of the `catalog` database (the operator service loads `services`).
//! A bad row is reported by section, index, id and field, and skipped (`server::seed`).

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::Points;
use futures_util::future::BoxFuture;
use serde::Deserialize;
use serde_json::Value;
use server::SeedReport;
use server::seed::{rows, savepoint, settle};

use catalog_db::schema::{banners, gift_card_codes, stores, system_configs};

/// The option key of the earn-rate table.
pub const POINT_RATES_KEY: &str = "point_rates";

#[derive(Deserialize)]
struct GiftCardCode {
    code: String,
    points: Points,
    #[serde(default = "yes")]
    active: bool,
}

#[derive(Deserialize, Insertable, AsChangeset)]
#[diesel(table_name = stores, treat_none_as_null = true)]
struct Store {
    id: i64,
    merchant_id: i64,
    real_merchant_id: Option<i64>,
    name: String,
    latitude: Option<f64>,
    longitude: Option<f64>,
    management_status: String,
    is_online: Option<bool>,
    #[serde(default)]
    store_disabled_ordering: bool,
}

#[derive(Deserialize, Insertable, AsChangeset)]
#[diesel(table_name = banners, treat_none_as_null = true)]
struct Banner {
    id: i64,
    link_type: String,
    merchant_id: Option<i64>,
    nearest_branch_merchant_id: Option<i64>,
}

fn yes() -> bool {
    true
}

impl GiftCardCode {
    /// A code and positive points; any number of decimals (the credit carries the exact
    /// decimal, `gift_cards::credit`; only the answer's text is rounded, as the spec's points
    /// text is).
    fn check(&self) -> Result<(), (&'static str, String)> {
        if self.code.trim().is_empty() {
            return Err(("code", "must not be empty".to_owned()));
        }
        let exact = self.points.as_decimal().normalized();
        if self.points.is_negative() || self.points == Points::zero() {
            return Err(("points", format!("must be positive, got {exact}")));
        }
        Ok(())
    }
}

/// Loads the sections inside the caller's transaction.
pub fn load<'c>(
    conn: &'c mut AsyncPgConnection,
    fixture: &'c Value,
) -> BoxFuture<'c, anyhow::Result<SeedReport>> {
    Box::pin(async move {
        let mut report = SeedReport::default();
        match fixture.get("point_rates") {
            None => {}
            Some(Value::Null) => {
                diesel::delete(system_configs::table.find(POINT_RATES_KEY))
                    .execute(conn)
                    .await?;
                report.line("point_rates: unset");
            }
            // Any other value is stored as is (the spec's "not a list" case), its numbers
            // with every digit they were written with.
            Some(value) => {
                diesel::insert_into(system_configs::table)
                    .values((
                        system_configs::key.eq(POINT_RATES_KEY),
                        system_configs::value.eq(value),
                    ))
                    .on_conflict(system_configs::key)
                    .do_update()
                    .set((
                        system_configs::value.eq(value),
                        system_configs::updated_at.eq(diesel::dsl::now),
                    ))
                    .execute(conn)
                    .await?;
                let shape = value
                    .as_array()
                    .map_or("not a list, stored as is".to_owned(), |rows| {
                        format!("{} rows", rows.len())
                    });
                report.line(format!("point_rates: {shape}"));
            }
        }
        let codes = rows::<GiftCardCode>(fixture, "gift_card_codes", "code", &mut report);
        let mut upserted = 0;
        for (at, code) in &codes {
            if let Err((field, why)) = code.check() {
                report.reject(at, Some(field), why);
                continue;
            }
            let values = (
                gift_card_codes::code.eq(&code.code),
                gift_card_codes::points.eq(code.points.as_decimal()),
                gift_card_codes::active.eq(code.active),
            );
            savepoint(conn).await?;
            let outcome = diesel::insert_into(gift_card_codes::table)
                .values(values)
                .on_conflict(gift_card_codes::code)
                .do_update()
                .set(values)
                .execute(conn)
                .await;
            upserted += usize::from(settle(conn, &mut report, at, outcome).await?.is_some());
        }
        report.line(counted("gift_card_codes", upserted, fixture));
        let mut upserted = 0;
        for (at, store) in &rows::<Store>(fixture, "stores", "id", &mut report) {
            savepoint(conn).await?;
            let outcome = diesel::insert_into(stores::table)
                .values(store)
                .on_conflict(stores::id)
                .do_update()
                .set((store, stores::updated_at.eq(diesel::dsl::now)))
                .execute(conn)
                .await;
            upserted += usize::from(settle(conn, &mut report, at, outcome).await?.is_some());
        }
        report.line(counted("stores", upserted, fixture));
        let mut upserted = 0;
        for (at, banner) in &rows::<Banner>(fixture, "banners", "id", &mut report) {
            savepoint(conn).await?;
            let outcome = diesel::insert_into(banners::table)
                .values(banner)
                .on_conflict(banners::id)
                .do_update()
                .set(banner)
                .execute(conn)
                .await;
            upserted += usize::from(settle(conn, &mut report, at, outcome).await?.is_some());
        }
        report.line(counted("banners", upserted, fixture));
        Ok(report)
    })
}

fn counted(section: &'static str, upserted: usize, fixture: &Value) -> String {
    let total = fixture
        .get(section)
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    if upserted == total {
        format!("{section}: {upserted} upserted")
    } else {
        format!("{section}: {upserted} of {total} upserted")
    }
}
