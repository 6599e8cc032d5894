//! `order-service seed FILE`: the fixture's `point_rates`, `gift_card_codes`, `stores` and
//! `banners` sections of the `catalog` database (the operator service loads `services`).
//! A bad row is reported by section, index, id and field, and skipped (`server::seed`).

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::Points;
use serde::Deserialize;
use serde_json::Value;
use server::SeedReport;
use server::seed::{Broken, Section, SeedFuture, upsert_rows};

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
    fn check(&self) -> Result<(), Broken> {
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

const GIFT_CARD_CODES: Section<GiftCardCode> =
    Section::new("gift_card_codes", "code", GiftCardCode::check);
const STORES: Section<Store> = Section::unchecked("stores", "id");
const BANNERS: Section<Banner> = Section::unchecked("banners", "id");

/// Loads the sections inside the caller's transaction.
pub fn load<'c>(conn: &'c mut AsyncPgConnection, fixture: &'c Value) -> SeedFuture<'c> {
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
        upsert_rows(conn, fixture, &mut report, GIFT_CARD_CODES, |conn, code| {
            let values = (
                gift_card_codes::code.eq(&code.code),
                gift_card_codes::points.eq(code.points.as_decimal()),
                gift_card_codes::active.eq(code.active),
                // The fixture's word is the code's: a code the back office withdrew is as
                // the fixture says again (a withdrawal's time goes with its inactivity).
                gift_card_codes::withdrawn_at.eq(None::<chrono::DateTime<chrono::Utc>>),
            );
            let key = gift_card_codes::code;
            server::upsert!(conn, gift_card_codes::table, values, key, values)
        })
        .await?;
        upsert_rows(conn, fixture, &mut report, STORES, |conn, store| {
            let changes = (store, stores::updated_at.eq(diesel::dsl::now));
            server::upsert!(conn, stores::table, store, stores::id, changes)
        })
        .await?;
        upsert_rows(conn, fixture, &mut report, BANNERS, |conn, banner| {
            server::upsert!(conn, banners::table, banner, banners::id, banner)
        })
        .await?;
        Ok(report)
    })
}
