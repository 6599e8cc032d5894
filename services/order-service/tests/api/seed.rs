//! `seed` loads the fixture's catalog sections that belong to the order service.

use diesel::sql_types::{BigInt, Nullable, Text};
use diesel::{QueryableByName, sql_query};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use order_service::seed;
use serde_json::json;

#[derive(QueryableByName)]
struct Counted {
    #[diesel(sql_type = BigInt)]
    n: i64,
}

#[derive(QueryableByName)]
struct Option_ {
    #[diesel(sql_type = Nullable<Text>)]
    value: Option<String>,
}

/// This service's loader, as `seed` runs it.
const SEED: testkit::seed::Seeder = testkit::seed::Seeder(seed::load);

async fn count(conn: &mut AsyncPgConnection, table: &str) -> i64 {
    sql_query(format!("SELECT count(*) AS n FROM {table}"))
        .get_result::<Counted>(conn)
        .await
        .unwrap()
        .n
}

async fn rates(conn: &mut AsyncPgConnection) -> Option<String> {
    sql_query("SELECT (SELECT value::text FROM system_configs WHERE key = 'point_rates') AS value")
        .get_result::<Option_>(conn)
        .await
        .unwrap()
        .value
}

#[tokio::test]
async fn seeding_twice_upserts_and_point_rates_follow_the_fixture_rules() {
    let database = ::db::testing::TestDatabase::new(catalog_db::MIGRATIONS).await;
    let mut conn = database.connect().await;
    let fixture = json!({
        "point_rates": [{"amount_from": 0, "amount_to": 50, "point_earn": 5}],
        "gift_card_codes": [{"code": "WELCOME-100", "points": 100, "active": true}],
        "stores": [{"id": 10, "merchant_id": 5, "real_merchant_id": 77, "name": "Olaya branch",
                    "latitude": 24.69, "longitude": 46.68, "management_status": "active",
                    "is_online": true, "store_disabled_ordering": false}],
        "banners": [{"id": 1, "link_type": "nearest_branch", "merchant_id": 10, "nearest_branch_merchant_id": 77}],
        "services": [{"id": 1}]
    });
    SEED.all(&mut conn, &fixture).await.unwrap();
    SEED.all(&mut conn, &fixture).await.unwrap();
    for table in ["gift_card_codes", "stores", "banners", "system_configs"] {
        assert_eq!(count(&mut conn, table).await, 1, "{table}");
    }
    assert_eq!(
        count(&mut conn, "services").await,
        0,
        "services belong to the operator service"
    );
    assert_eq!(
        rates(&mut conn).await.as_deref(),
        Some(r#"[{"amount_to": 50, "point_earn": 5, "amount_from": 0}]"#)
    );

    SEED.all(&mut conn, &json!({"point_rates": {"not": "a list"}}))
        .await
        .unwrap();
    assert_eq!(
        rates(&mut conn).await.as_deref(),
        Some(r#"{"not": "a list"}"#)
    );
    SEED.all(&mut conn, &json!({"stores": []})).await.unwrap();
    assert!(
        rates(&mut conn).await.is_some(),
        "an absent section leaves the option alone"
    );
    SEED.all(&mut conn, &json!({"point_rates": null}))
        .await
        .unwrap();
    assert_eq!(rates(&mut conn).await, None);
}

#[derive(QueryableByName)]
struct CodePoints {
    #[diesel(sql_type = Text)]
    code: String,
    #[diesel(sql_type = Text)]
    points: String,
}

/// Gift-card codes keep every decimal they are written with (the credit carries the exact
/// decimal); only codes that cannot be credited at all are refused, each reported, the rest
/// loaded.
#[tokio::test]
async fn gift_card_codes_load_exactly_and_only_the_bad_rows_are_refused() {
    let database = ::db::testing::TestDatabase::new(catalog_db::MIGRATIONS).await;
    let mut conn = database.connect().await;
    let fixture: serde_json::Value = serde_json::from_str(
        r#"{"gift_card_codes": [
            {"code": "FINE", "points": 1.23456, "active": true},
            {"code": "HUGE", "points": 123456789012345678901234.5, "active": true},
            {"code": "ROUND", "points": 100.0, "active": true},
            {"code": "ZERO", "points": 0, "active": true},
            {"code": "NEGATIVE", "points": -5, "active": true},
            {"code": "   ", "points": 5, "active": true}
        ]}"#,
    )
    .unwrap();
    let report = SEED.report(&mut conn, &fixture).await.unwrap();
    let rejected: Vec<String> = report.rejected.iter().map(|r| r.to_string()).collect();
    assert_eq!(rejected.len(), 3, "{rejected:?}");
    for (index, reason) in [
        (3, "must be positive"),
        (4, "must be positive"),
        (5, "must not be empty"),
    ] {
        assert!(
            rejected
                .iter()
                .any(|r| r.contains(&format!("[{index}]")) && r.contains(reason)),
            "row {index}: {rejected:?}"
        );
    }
    let loaded: Vec<CodePoints> =
        sql_query("SELECT code, points::text AS points FROM gift_card_codes ORDER BY code")
            .load(&mut conn)
            .await
            .unwrap();
    let loaded: Vec<(String, String)> = loaded.into_iter().map(|r| (r.code, r.points)).collect();
    assert_eq!(
        loaded,
        [
            ("FINE".to_owned(), "1.23456".to_owned()),
            ("HUGE".to_owned(), "123456789012345678901234.5".to_owned()),
            ("ROUND".to_owned(), "100.0".to_owned()),
        ]
    );
}
