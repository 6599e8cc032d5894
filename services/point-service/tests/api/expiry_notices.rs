//! "Points expiring soon" (`point_service::expiry::notices`), sent by `expire-points`: once per
//! client, expiry date and notice (7 and 1 days before by default), with the points that would
//! expire, for a seeded set whose dates fall across the Riyadh midnight and on a leap day.

use serde_json::{Value, json};

use crate::helpers::*;

/// As of 2024-02-22 (Asia/Riyadh), with 365 days of inactivity: each client's one earn, its
/// Riyadh date, and so its expiry date.
fn fixture() -> Value {
    json!({
        "point_settings": {"expiry": "inactivity", "inactivity_days": 365},
        "point_transactions": [
            // 23:59:59 in Riyadh on 2023-02-22: expires 2024-02-22, today (both notices).
            {"client_id": 3001, "kind": "earn", "points": "10", "created_at": "2023-02-22T20:59:59Z"},
            // One second later it is 2023-02-23 in Riyadh: 2024-02-23, tomorrow (both).
            {"client_id": 3002, "kind": "earn", "points": "20.50", "created_at": "2023-02-22T21:00:00Z"},
            // 2023-02-24 in Riyadh: 2024-02-24, two days ahead (the 7-day notice only).
            {"client_id": 3003, "kind": "earn", "points": "30", "created_at": "2023-02-23T21:00:00Z"},
            // 2023-03-01 + 365 days is the leap day 2024-02-29, seven days ahead (7-day only).
            {"client_id": 3004, "kind": "earn", "points": "40.125", "created_at": "2023-03-01T09:00:00Z"},
            // 2023-03-02 in Riyadh: 2024-03-01, eight days ahead (none).
            {"client_id": 3005, "kind": "earn", "points": "50", "created_at": "2023-03-01T21:00:00Z"},
            // Would expire tomorrow, but spent everything (none).
            {"client_id": 3006, "kind": "earn", "points": "60", "created_at": "2023-02-23T12:00:00Z"},
            {"client_id": 3006, "kind": "spend", "points": "60", "created_at": "2023-06-01T12:00:00Z"},
            // Expired two days ago: the run expires it, and sends no notice.
            {"client_id": 3007, "kind": "earn", "points": "5", "created_at": "2023-02-20T12:00:00Z"}
        ]
    })
}

async fn expire_points(database_url: &str, notices: Option<&str>) -> (i32, String, String) {
    let mut command =
        point_service_command(database_url, &["expire-points", "--today", "2024-02-22"]);
    command.env("RUST_LOG", "off");
    if let Some(days) = notices {
        command.env("EXPIRY_NOTICE_DAYS", days);
    }
    testkit::command::output(command).await
}

/// The notices' events, in the order they were written: (client, data).
async fn expiring_events(database: &db::testing::TestDatabase) -> Vec<(i64, Value)> {
    let rows: Vec<Value> = serde_json::from_str(
        &database
            .rows_json(
                "SELECT client_id, data FROM event_outbox WHERE type = 'points.expiring' \
                 ORDER BY data->>'daysBefore' DESC, client_id",
            )
            .await,
    )
    .unwrap();
    rows.iter()
        .map(|row| (row["client_id"].as_i64().unwrap(), row["data"].clone()))
        .collect()
}

fn notice(date: &str, days: u32, points: &str) -> Value {
    json!({"expiryDate": date, "daysBefore": days, "points": points})
}

#[tokio::test]
async fn each_client_gets_each_notice_once_across_the_riyadh_midnight_and_a_leap_day() {
    let database = testkit::seed::seeded_database(
        point_service::db::MIGRATIONS,
        point_service::seed::load,
        &fixture(),
    )
    .await;
    let (code, out, err) = expire_points(database.url(), None).await;
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.starts_with("expired: 1 clients, 5 points"), "{out}");
    let expected = vec![
        (3001, notice("2024-02-22", 7, "10")),
        (3002, notice("2024-02-23", 7, "20.5")),
        (3003, notice("2024-02-24", 7, "30")),
        (3004, notice("2024-02-29", 7, "40.125")),
        (3001, notice("2024-02-22", 1, "10")),
        (3002, notice("2024-02-23", 1, "20.5")),
    ];
    assert_eq!(expiring_events(&database).await, expected);

    // The job run again the same day (a retried CronJob, a person): nothing new.
    let (code, out, err) = expire_points(database.url(), None).await;
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(expiring_events(&database).await, expected);
    assert_eq!(
        database
            .count("SELECT count(*) AS n FROM expiry_notices")
            .await,
        6
    );
}

#[tokio::test]
async fn the_notices_are_a_setting_and_a_bad_one_changes_nothing() {
    let database = testkit::seed::seeded_database(
        point_service::db::MIGRATIONS,
        point_service::seed::load,
        &fixture(),
    )
    .await;
    for bad in ["7,x", "400", "1,1", "-1"] {
        let (code, _, err) = expire_points(database.url(), Some(bad)).await;
        assert_eq!(code, 2, "{bad}: {err}");
        assert!(err.contains("EXPIRY_NOTICE_DAYS"), "{err}");
    }
    assert_eq!(
        database
            .count("SELECT count(*) AS n FROM point_entries WHERE kind = 'expiry'")
            .await,
        0,
        "a bad setting is refused before anything expires"
    );
    // Only the day before.
    let (code, out, err) = expire_points(database.url(), Some("1")).await;
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(
        expiring_events(&database).await,
        [
            (3001, notice("2024-02-22", 1, "10")),
            (3002, notice("2024-02-23", 1, "20.5"))
        ]
    );
}
