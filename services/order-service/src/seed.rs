//! `order-service seed FILE`: the fixture's `point_rates`, `gift_card_codes`, `stores` and
//! `banners` sections of the `catalog` database (the operator service loads `services`).

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use domain::Points;
use futures_util::future::BoxFuture;
use serde::Deserialize;

use catalog::schema::{banners, gift_card_codes, stores, system_configs};

/// The option key of the earn-rate table.
pub const POINT_RATES_KEY: &str = "point_rates";

#[derive(Deserialize)]
struct Fixture {
    /// Absent: untouched; `null`: unset; a list: the table; anything else: stored as is.
    #[serde(default, deserialize_with = "present")]
    point_rates: Option<serde_json::Value>,
    #[serde(default)]
    gift_card_codes: Vec<GiftCardCode>,
    #[serde(default)]
    stores: Vec<Store>,
    #[serde(default)]
    banners: Vec<Banner>,
}

/// Tells an absent key (`None`) from an explicit `null` (`Some(Value::Null)`).
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<serde_json::Value>, D::Error> {
    serde_json::Value::deserialize(d).map(Some)
}

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

/// Loads the sections inside the caller's transaction.
pub fn load<'c>(
    conn: &'c mut AsyncPgConnection,
    fixture: &'c serde_json::Value,
) -> BoxFuture<'c, anyhow::Result<Vec<String>>> {
    Box::pin(async move {
        let fixture = Fixture::deserialize(fixture)?;
        let mut report = Vec::new();
        match &fixture.point_rates {
            None => {}
            Some(serde_json::Value::Null) => {
                diesel::delete(system_configs::table.find(POINT_RATES_KEY))
                    .execute(conn)
                    .await?;
                report.push("point_rates: unset".to_owned());
            }
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
                report.push(format!("point_rates: {shape}"));
            }
        }
        for (i, code) in fixture.gift_card_codes.iter().enumerate() {
            if code.code.trim().is_empty()
                || code.points.is_negative()
                || code.points == Points::zero()
            {
                anyhow::bail!("gift_card_codes[{i}]: needs a code and positive points");
            }
            let values = (
                gift_card_codes::code.eq(&code.code),
                gift_card_codes::points.eq(code.points.as_decimal()),
                gift_card_codes::active.eq(code.active),
            );
            diesel::insert_into(gift_card_codes::table)
                .values(values)
                .on_conflict(gift_card_codes::code)
                .do_update()
                .set(values)
                .execute(conn)
                .await?;
        }
        report.push(format!(
            "gift_card_codes: {} upserted",
            fixture.gift_card_codes.len()
        ));
        for (i, store) in fixture.stores.iter().enumerate() {
            diesel::insert_into(stores::table)
                .values(store)
                .on_conflict(stores::id)
                .do_update()
                .set((store, stores::updated_at.eq(diesel::dsl::now)))
                .execute(conn)
                .await
                .map_err(|e| anyhow::anyhow!("stores[{i}] (id {}): {e}", store.id))?;
        }
        report.push(format!("stores: {} upserted", fixture.stores.len()));
        for (i, banner) in fixture.banners.iter().enumerate() {
            diesel::insert_into(banners::table)
                .values(banner)
                .on_conflict(banners::id)
                .do_update()
                .set(banner)
                .execute(conn)
                .await
                .map_err(|e| anyhow::anyhow!("banners[{i}] (id {}): {e}", banner.id))?;
        }
        report.push(format!("banners: {} upserted", fixture.banners.len()));
        Ok(report)
    })
}
