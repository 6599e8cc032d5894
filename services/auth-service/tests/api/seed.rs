//! `seed` loads the fixture's auth sections, twice without change, and ignores the rest.

use auth_service::{db, seed};
use diesel::sql_types::{BigInt, Text};
use diesel::{QueryableByName, sql_query};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use serde_json::json;

#[derive(QueryableByName, Debug, PartialEq)]
struct Row {
    #[diesel(sql_type = BigInt)]
    client_id: i64,
    #[diesel(sql_type = Text)]
    first_name: String,
}

async fn run(
    conn: &mut AsyncPgConnection,
    fixture: &serde_json::Value,
) -> anyhow::Result<Vec<String>> {
    conn.transaction::<_, anyhow::Error, _>(async |c| seed::load(c, fixture).await)
        .await
}

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
    let database = ::db::testing::TestDatabase::new(db::SCHEMA).await;
    let mut conn = database.connect().await;
    let report = run(&mut conn, &fixture("Sara")).await.unwrap();
    assert_eq!(report, ["clients: 1 upserted", "legacy_tokens: 1 upserted"]);
    run(&mut conn, &fixture("Sarah")).await.unwrap();

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
async fn a_bad_row_names_itself_and_writes_nothing() {
    let database = ::db::testing::TestDatabase::new(db::SCHEMA).await;
    let mut conn = database.connect().await;
    let mut bad = fixture("Sara");
    bad["clients"].as_array_mut().unwrap().push(json!({
        "client_id": 1002, "odoo_id": "5002", "contact_phone": "0500", "status": "active"
    }));
    let error = run(&mut conn, &bad).await.unwrap_err().to_string();
    assert!(error.starts_with("clients[1]: "), "{error}");
    let rows: Vec<Row> = sql_query("SELECT client_id, first_name FROM clients")
        .load(&mut conn)
        .await
        .unwrap();
    assert!(
        rows.is_empty(),
        "a failed seed must not leave half of its rows"
    );
}
