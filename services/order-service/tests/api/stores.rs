//! Store detail, branches and the nearest store: one test per rule and per kind of null.

use serde_json::{Value, json};

use crate::helpers::*;

/// A customer in Olaya, Riyadh.
const HERE: (f64, f64) = (24.6907, 46.6855);

async fn store(
    app: &TestApp,
    id: i64,
    real: i64,
    at: Option<(f64, f64)>,
    status: &str,
    online: Option<bool>,
    disabled: bool,
) {
    let (lat, lon) = at.map_or(("NULL".to_owned(), "NULL".to_owned()), |(a, b)| {
        (a.to_string(), b.to_string())
    });
    let online = online.map_or("NULL".to_owned(), |o| o.to_string());
    app.sql(&format!(
        "INSERT INTO stores (id, merchant_id, real_merchant_id, name, latitude, longitude, \
         management_status, is_online, store_disabled_ordering) \
         VALUES ({id}, 5, {real}, 'Branch {id}', {lat}, {lon}, '{status}', {online}, {disabled})"
    ))
    .await;
}

async fn nearest(app: &TestApp, merchant: &str, query: &str) -> Value {
    let (status, body) = app.nearest_store(merchant, query).await;
    assert_eq!(status, 200);
    body
}

fn at(here: (f64, f64)) -> String {
    format!("latitude={}&longitude={}", here.0, here.1)
}

#[tokio::test]
async fn rule_1_only_active_stores_with_a_real_location_count() {
    let app = spawn_app().await;
    store(&app, 1, 77, Some(HERE), "inactive", Some(true), false).await;
    store(&app, 2, 77, Some((0.0, 0.0)), "active", Some(true), false).await;
    store(&app, 3, 77, None, "active", Some(true), false).await;
    assert_eq!(
        nearest(&app, "77", &at(HERE)).await,
        json!({"store_id": null})
    );
    store(
        &app,
        4,
        77,
        Some((24.75, 46.70)),
        "active",
        Some(true),
        false,
    )
    .await;
    assert_eq!(nearest(&app, "77", &at(HERE)).await, json!({"store_id": 4}));
}

#[tokio::test]
async fn rule_2_offline_null_online_or_disabled_ordering_is_not_operational() {
    let app = spawn_app().await;
    store(&app, 1, 77, Some((24.6910, 46.6860)), "active", None, false).await;
    store(
        &app,
        2,
        77,
        Some((24.6912, 46.6862)),
        "active",
        Some(false),
        false,
    )
    .await;
    store(
        &app,
        3,
        77,
        Some((24.6914, 46.6864)),
        "active",
        Some(true),
        true,
    )
    .await;
    store(
        &app,
        4,
        77,
        Some((24.7600, 46.7000)),
        "active",
        Some(true),
        false,
    )
    .await;
    assert_eq!(nearest(&app, "77", &at(HERE)).await, json!({"store_id": 4}));
}

#[tokio::test]
async fn rule_3_an_operational_store_within_12_km_beats_a_closer_closed_one() {
    let app = spawn_app().await;
    store(
        &app,
        1,
        77,
        Some((24.6910, 46.6860)),
        "active",
        Some(false),
        false,
    )
    .await;
    store(
        &app,
        2,
        77,
        Some((24.7800, 46.6800)),
        "active",
        Some(true),
        false,
    )
    .await; // about 10 km
    assert_eq!(nearest(&app, "77", &at(HERE)).await, json!({"store_id": 2}));
}

#[tokio::test]
async fn rule_4_otherwise_the_nearest_active_store_at_any_distance() {
    let app = spawn_app().await;
    store(
        &app,
        1,
        77,
        Some((26.2794, 50.2083)),
        "active",
        Some(true),
        false,
    )
    .await; // Khobar, operational
    store(
        &app,
        2,
        77,
        Some((24.9000, 46.6000)),
        "active",
        Some(false),
        false,
    )
    .await; // about 25 km, offline
    assert_eq!(nearest(&app, "77", &at(HERE)).await, json!({"store_id": 2}));
}

#[tokio::test]
async fn rule_5_ties_go_to_the_lower_id() {
    let app = spawn_app().await;
    store(
        &app,
        9,
        77,
        Some((24.70, 46.69)),
        "active",
        Some(true),
        false,
    )
    .await;
    store(
        &app,
        4,
        77,
        Some((24.70, 46.69)),
        "active",
        Some(true),
        false,
    )
    .await;
    assert_eq!(nearest(&app, "77", &at(HERE)).await, json!({"store_id": 4}));
}

#[tokio::test]
async fn every_kind_of_nothing_is_a_null_store_id() {
    let app = spawn_app().await;
    store(
        &app,
        1,
        77,
        Some((24.70, 46.69)),
        "active",
        Some(true),
        false,
    )
    .await;
    assert_eq!(
        nearest(&app, "78", &at(HERE)).await,
        json!({"store_id": null}),
        "unknown merchant"
    );
    assert_eq!(
        nearest(&app, "abc", &at(HERE)).await,
        json!({"store_id": null}),
        "unreadable merchant"
    );
    assert_eq!(
        nearest(&app, "77", "").await,
        json!({"store_id": null}),
        "no coordinates"
    );
    assert_eq!(
        nearest(&app, "77", "latitude=abc&longitude=46").await,
        json!({"store_id": null}),
        "unreadable coordinates"
    );
    app.sql("ALTER TABLE stores RENAME COLUMN is_online TO gone")
        .await;
    assert_eq!(
        nearest(&app, "77", &at(HERE)).await,
        json!({"store_id": null}),
        "an internal failure"
    );
}

#[tokio::test]
async fn store_detail_and_branches() {
    let app = spawn_app().await;
    store(
        &app,
        10,
        77,
        Some((24.69, 46.68)),
        "active",
        Some(true),
        false,
    )
    .await;
    store(
        &app,
        11,
        77,
        Some((24.70, 46.68)),
        "inactive",
        Some(true),
        false,
    )
    .await;
    let (status, body) = app.store(10).await;
    assert_eq!(status, 200);
    assert_eq!(
        (body["id"].clone(), body["merchant_id"].clone()),
        (json!(10), json!(5))
    );
    assert_eq!(app.store(11).await, error_c(404, "Store not found"));
    assert_eq!(app.store(999).await, error_c(404, "Store not found"));
    let (_, branches) = app.stores("merchantId=5").await;
    assert_eq!(branches["data"].as_array().unwrap().len(), 1);
    assert_eq!(
        app.stores("").await,
        error_c(400, "merchantId must be an integer")
    );
}

#[tokio::test]
async fn a_coordinate_sent_twice_counts_once_and_still_answers_200() {
    let app = spawn_app().await;
    store(&app, 10, 77, Some(HERE), "active", Some(true), false).await;
    let (lat, lon) = HERE;
    assert_eq!(
        nearest(
            &app,
            "77",
            &format!("latitude={lat}&latitude=abc&longitude={lon}")
        )
        .await,
        json!({"store_id": 10})
    );
}

/// The cache (moka) runs on the real clock, which a test cannot set: the test asserts only
/// what the clock it measured proves, so a slow machine cannot make it fail.
#[tokio::test]
async fn a_replica_keeps_a_brand_for_the_cache_period_but_never_keeps_a_failure() {
    use std::time::{Duration, Instant};
    const PERIOD: Duration = Duration::from_secs(3);
    let app = spawn_app_with(Options {
        nearest_cache_ttl: PERIOD,
        ..Options::default()
    })
    .await;
    // A closer branch opens: this replica sees it once the period is over, not before. The
    // brand is cached after `started`, so a round shorter than the period is within it; a
    // longer one (a loaded machine) proves nothing and is run again with another brand.
    let mut round = 0;
    let (brand, closer, cached_by) = loop {
        round += 1;
        let (brand, far, closer) = (100 + round, 1000 + 2 * round, 1001 + 2 * round);
        store(
            &app,
            far,
            brand,
            Some((24.75, 46.70)),
            "active",
            Some(true),
            false,
        )
        .await;
        let started = Instant::now();
        assert_eq!(
            nearest(&app, &brand.to_string(), &at(HERE)).await,
            json!({"store_id": far})
        );
        let cached_by = Instant::now();
        store(&app, closer, brand, Some(HERE), "active", Some(true), false).await;
        let within = nearest(&app, &brand.to_string(), &at(HERE)).await;
        if started.elapsed() < PERIOD {
            assert_eq!(within, json!({"store_id": far}), "within the period");
            break (brand, closer, cached_by);
        }
        assert!(round < 20, "no round within {PERIOD:?}");
    };
    tokio::time::sleep_until((cached_by + PERIOD + Duration::from_millis(1)).into()).await;
    assert_eq!(
        nearest(&app, &brand.to_string(), &at(HERE)).await,
        json!({"store_id": closer}),
        "after the period"
    );

    // A brand whose read failed is read again on the next request.
    store(&app, 3, 78, Some(HERE), "active", Some(true), false).await;
    app.sql("ALTER TABLE stores RENAME COLUMN is_online TO gone")
        .await;
    assert_eq!(
        nearest(&app, "78", &at(HERE)).await,
        json!({"store_id": null})
    );
    app.sql("ALTER TABLE stores RENAME COLUMN gone TO is_online")
        .await;
    assert_eq!(nearest(&app, "78", &at(HERE)).await, json!({"store_id": 3}));
}

#[tokio::test]
async fn a_brands_branches_come_one_page_of_at_most_100_at_a_time() {
    let app = spawn_app().await;
    app.sql(
        "INSERT INTO stores (id, merchant_id, real_merchant_id, name, latitude, longitude, management_status, \
         is_online, store_disabled_ordering) \
         SELECT g, 5, 77, 'Branch ' || g, 24.7, 46.7, 'active', true, false FROM generate_series(1, 250) g",
    )
    .await;
    let ids = |body: &Value| -> Vec<i64> {
        body["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["id"].as_i64().unwrap())
            .collect()
    };
    let (status, first) = app.stores("merchantId=5").await;
    assert_eq!(status, 200);
    assert_eq!(ids(&first), (1..=100).collect::<Vec<_>>());
    let (_, third) = app.stores("merchantId=5&page=3").await;
    assert_eq!(ids(&third), (201..=250).collect::<Vec<_>>());
    let (_, small) = app.stores("merchantId=5&page=2&limit=7").await;
    assert_eq!(ids(&small), (8..=14).collect::<Vec<_>>());
    let (_, past) = app.stores("merchantId=5&page=4").await;
    assert_eq!(ids(&past), Vec::<i64>::new());
    assert_eq!(
        app.stores("merchantId=5&limit=101").await,
        error_c(400, "limit must be an integer from 1 to 100")
    );
    assert_eq!(
        app.stores("merchantId=5&page=0").await,
        error_c(400, "page must be an integer from 1 to 1000")
    );
}
