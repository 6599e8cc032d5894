//! `seed` loads the fixture's auth sections, twice without change, and ignores the rest.

use auth_service::{db, seed};
use diesel::sql_types::{BigInt, Text};
use diesel::{QueryableByName, sql_query};
use diesel_async::RunQueryDsl;
use serde_json::json;

#[derive(QueryableByName, Debug, PartialEq)]
struct Row {
    #[diesel(sql_type = BigInt)]
    client_id: i64,
    #[diesel(sql_type = Text)]
    first_name: String,
}

/// This service's loader, as `seed` runs it.
const SEED: testkit::seed::Seeder = testkit::seed::Seeder(seed::load);

fn fixture(first_name: &str) -> serde_json::Value {
    json!({
        "clients": [{"client_id": 1001, "odoo_id": "5001", "contact_phone": "+966500000001",
                     "status": "active", "email_address": null, "first_name": first_name, "last_name": "Ali",
                     "sex": 2, "birth_date": "1990-05-01", "receive_offers": 1, "push_enabled": 1,
                     "is_food_truck_user": 0, "is_cod_disabled": 0, "test_mode": true}],
        "legacy_tokens": [{"client_id": 1001, "token": "legacy-token-of-sara-0123456789abcdef"}],
        "stores": [{"id": 10}]
    })
}

#[tokio::test]
async fn seeding_twice_upserts_by_id() {
    let database = ::db::testing::TestDatabase::new(db::MIGRATIONS).await;
    let mut conn = database.connect().await;
    let report = SEED.all(&mut conn, &fixture("Sara")).await.unwrap();
    assert_eq!(report, ["clients: 1 upserted", "legacy_tokens: 1 upserted"]);
    SEED.all(&mut conn, &fixture("Sarah")).await.unwrap();

    let rows: Vec<Row> = sql_query("SELECT client_id, first_name FROM clients")
        .load(&mut conn)
        .await
        .unwrap();
    assert_eq!(
        rows,
        [Row {
            client_id: 1001,
            first_name: "Sarah".into()
        }]
    );
    let tokens: Vec<Row> =
        sql_query("SELECT client_id, encode(token_hash, 'hex') AS first_name FROM legacy_tokens")
            .load(&mut conn)
            .await
            .unwrap();
    assert_eq!(tokens.len(), 1);
    assert_ne!(
        tokens[0].first_name, "legacy-token-of-sara-0123456789abcdef",
        "the raw token must not be stored"
    );
}

#[tokio::test]
async fn a_bad_row_is_reported_by_field_and_skipped_and_the_valid_rows_load() {
    let database = ::db::testing::TestDatabase::new(db::MIGRATIONS).await;
    let mut conn = database.connect().await;
    let mut bad = fixture("Sara");
    bad["clients"].as_array_mut().unwrap().push(json!({
        "client_id": 1002, "odoo_id": "5002", "contact_phone": "0500", "status": "active"
    }));
    bad["clients"].as_array_mut().unwrap().push(json!({
        "client_id": "x", "odoo_id": "5003", "contact_phone": "+966500000003", "status": "active"
    }));
    let report = SEED.report(&mut conn, &bad).await.unwrap();
    let rejected: Vec<String> = report.rejected.iter().map(ToString::to_string).collect();
    assert_eq!(rejected.len(), 2, "{rejected:?}");
    for prefix in [
        "clients[1] (client_id 1002): contact_phone: ",
        "clients[2] (client_id x): client_id: invalid type",
    ] {
        assert!(
            rejected.iter().any(|r| r.starts_with(prefix)),
            "{prefix} not in {rejected:?}"
        );
    }
    let rows: Vec<Row> = sql_query("SELECT client_id, first_name FROM clients")
        .load(&mut conn)
        .await
        .unwrap();
    assert_eq!(
        rows,
        [Row {
            client_id: 1001,
            first_name: "Sara".into()
        }],
        "the valid row loads beside the bad ones"
    );
}
