//! `seed` loads the fixture's points sections; a second run adds nothing.

use diesel::sql_types::{BigInt, Text};
use diesel::{QueryableByName, sql_query};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use point_service::{db, seed};
use serde_json::json;

#[derive(QueryableByName, Debug, PartialEq)]
struct Balance {
    #[diesel(sql_type = BigInt)]
    client_id: i64,
    #[diesel(sql_type = Text)]
    balance: String,
    #[diesel(sql_type = BigInt)]
    entries: i64,
}

/// This service's loader, as `seed` runs it.
const SEED: testkit::seed::Seeder = testkit::seed::Seeder(seed::load);

fn fixture() -> serde_json::Value {
    json!({
        "point_settings": {"expiry": "inactivity", "inactivity_days": 365},
        "point_transactions": [
            {"client_id": 1001, "kind": "earn", "points": "500.5", "created_at": "2026-01-01T10:00:00Z"},
            {"client_id": 1001, "kind": "spend", "points": "100", "created_at": "2026-02-01T10:00:00Z"},
            {"client_id": 1001, "kind": "earn", "points": "500.5", "created_at": "2026-01-01T10:00:00Z"},
            {"client_id": 1002, "kind": "adjustment", "points": "-20.25", "created_at": "2026-02-01T10:00:00Z"}
        ],
        "point_offers": [{"id": "64B7F0C2A1B2C3D4E5F60718", "point_amount": 100, "purchased_point_amount": 120,
                          "amount": "15.00", "sequence": 1, "legacy_id": 3, "active": true, "deleted": false}],
        "point_occasions": [{"id": "64b7f0c2a1b2c3d4e5f60801", "occasion_en": " Birthday ",
                             "occasion_ar": "عيد ميلاد", "is_custom": 0, "active": true}],
        "points_faq": [{"question_en": "Q", "answer_en": "A", "question_ar": "س", "answer_ar": "ج"}],
        "legacy_point_orders": [{"correlation_id": "6f1c1f9e-2d0b-4b43-9a52-5d2f0c7e8a11", "payer_id": 1001,
                                 "recipient_id": 1002, "status": "paid", "payment_status": "AUTHORIZED",
                                 "point_amount": 100, "purchased_point_amount": 120, "money_amount": "15.00",
                                 "payment_type": "checkout", "order_type": "transfer"}],
        "clients": [{"client_id": 1001}]
    })
}

async fn balances(conn: &mut AsyncPgConnection) -> Vec<Balance> {
    sql_query(
        "SELECT a.client_id, a.balance::text AS balance, count(e.id) AS entries FROM point_accounts a \
         LEFT JOIN point_entries e USING (client_id) GROUP BY a.client_id ORDER BY a.client_id",
    )
    .load(conn)
    .await
    .unwrap()
}

#[tokio::test]
async fn seeding_twice_keeps_one_copy_of_every_row() {
    let database = ::db::testing::TestDatabase::new(db::MIGRATIONS).await;
    let mut conn = database.connect().await;
    let first = SEED.all(&mut conn, &fixture()).await.unwrap();
    assert!(
        first.contains(&"point_transactions: 4 added (0 already present)".to_owned()),
        "{first:?}"
    );
    let second = SEED.all(&mut conn, &fixture()).await.unwrap();
    assert!(
        second.contains(&"point_transactions: 0 added (4 already present)".to_owned()),
        "{second:?}"
    );

    // Two identical earn rows are two entries: 500.5 + 500.5 - 100.
    assert_eq!(
        balances(&mut conn).await,
        [
            Balance {
                client_id: 1001,
                balance: "901.0".into(),
                entries: 3
            },
            Balance {
                client_id: 1002,
                balance: "-20.25".into(),
                entries: 1
            },
        ]
    );
    #[derive(QueryableByName)]
    struct Counted {
        #[diesel(sql_type = BigInt)]
        n: i64,
    }
    for (table, expected) in [
        ("point_offers", 1),
        ("point_occasions", 1),
        ("points_faq", 1),
        ("point_orders", 1),
    ] {
        let counted: Counted = sql_query(format!("SELECT count(*) AS n FROM {table}"))
            .get_result(&mut conn)
            .await
            .unwrap();
        assert_eq!(counted.n, expected, "{table}");
    }
    let offer: Counted =
        sql_query("SELECT count(*) AS n FROM point_offers WHERE id = '64b7f0c2a1b2c3d4e5f60718'")
            .get_result(&mut conn)
            .await
            .unwrap();
    assert_eq!(offer.n, 1, "offer ids are kept in lower case");
    let legacy: Counted =
        sql_query("SELECT count(*) AS n FROM point_orders WHERE order_no IS NULL")
            .get_result(&mut conn)
            .await
            .unwrap();
    assert_eq!(legacy.n, 1, "legacy copies have no order number");
}

#[tokio::test]
async fn null_settings_unset_them_and_ledger_entries_are_append_only() {
    let database = ::db::testing::TestDatabase::new(db::MIGRATIONS).await;
    let mut conn = database.connect().await;
    SEED.all(&mut conn, &fixture()).await.unwrap();
    let report = SEED
        .all(&mut conn, &json!({"point_settings": null}))
        .await
        .unwrap();
    assert_eq!(report[0], "point_settings: unset");

    let refused = sql_query("UPDATE point_entries SET points = 1")
        .execute(&mut conn)
        .await;
    assert!(refused.unwrap_err().to_string().contains("append-only"));
    let refused = sql_query("DELETE FROM point_entries")
        .execute(&mut conn)
        .await;
    assert!(refused.is_err());
}
