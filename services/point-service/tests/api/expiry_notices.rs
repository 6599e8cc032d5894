//! "Points expiring soon" (`point_service::expiry::notices`), sent by `expire-points`: once per
//! client, expiry date and notice (7 and 1 days before by default, each covering the days down
//! to the next), with the points that would expire, as of the database's Riyadh date. The
//! seeded clients earned around 2024-02-29 and either side of the Riyadh midnight, and the
//! inactivity days are set so that an earn on the leap day expires three days from today.

use chrono::{Days, NaiveDate};
use serde_json::{Value, json};

use crate::helpers::*;

const LEAP_DAY: &str = "2024-02-29";

/// The seeded set and its expiry dates as days from today (`T`).
fn fixture(inactivity_days: i64) -> Value {
    json!({
        "point_settings": {"expiry": "inactivity", "inactivity_days": inactivity_days},
        "point_transactions": [
            // Noon in Riyadh on the leap day: expires T+3 (the 7-day notice).
            {"client_id": 3001, "kind": "earn", "points": "10", "created_at": "2024-02-29T09:00:00Z"},
            // 23:59:59 in Riyadh on 2024-02-26: T (the 1-day notice, on the last day).
            {"client_id": 3002, "kind": "earn", "points": "20.50", "created_at": "2024-02-26T20:59:59Z"},
            // One second later it is 2024-02-27 in Riyadh: T+1 (the 1-day notice).
            {"client_id": 3003, "kind": "earn", "points": "30", "created_at": "2024-02-26T21:00:00Z"},
            // 2024-03-04, four days after the leap day: T+7 (the 7-day notice).
            {"client_id": 3004, "kind": "earn", "points": "40.125", "created_at": "2024-03-04T09:00:00Z"},
            // 2024-03-05: T+8 (none yet).
            {"client_id": 3005, "kind": "earn", "points": "50", "created_at": "2024-03-05T09:00:00Z"},
            // Would expire at T+1, but spent everything (none).
            {"client_id": 3006, "kind": "earn", "points": "60", "created_at": "2024-02-27T09:00:00Z"},
            {"client_id": 3006, "kind": "spend", "points": "60", "created_at": "2024-02-28T09:00:00Z"},
            // Expired yesterday (T-1): the run expires it, and sends it no notice.
            {"client_id": 3007, "kind": "earn", "points": "5", "created_at": "2024-02-25T09:00:00Z"}
        ]
    })
}

struct Seeded {
    database: db::testing::TestDatabase,
    today: NaiveDate,
}

/// The set, with inactivity days that put the leap day's earn three days from the database's
/// Riyadh today.
async fn seeded() -> Seeded {
    let probe = db::testing::TestDatabase::new(point_service::db::MIGRATIONS).await;
    let today = point_service::riyadh::today(&mut probe.connect().await)
        .await
        .unwrap();
    let leap: NaiveDate = LEAP_DAY.parse().unwrap();
    let inactivity = (today + Days::new(3) - leap).num_days();
    let database = testkit::seed::seeded_database(
        point_service::db::MIGRATIONS,
        point_service::seed::load,
        &fixture(inactivity),
    )
    .await;
    Seeded { database, today }
}

async fn expire_points(database_url: &str, notices: Option<&str>) -> (i32, String, String) {
    let mut command = point_service_command(database_url, &["expire-points"]);
    command.env("RUST_LOG", "off");
    if let Some(days) = notices {
        command.env("EXPIRY_NOTICE_DAYS", days);
    }
    testkit::command::output(command).await
}

/// The notices' events in commit order: (client, data).
async fn expiring_events(database: &db::testing::TestDatabase) -> Vec<(i64, Value)> {
    let rows: Vec<Value> = serde_json::from_str(
        &database
            .rows_json(
                "SELECT client_id, data FROM event_outbox WHERE type = 'points.expiring' ORDER BY id",
            )
            .await,
    )
    .unwrap();
    rows.iter()
        .map(|row| (row["client_id"].as_i64().unwrap(), row["data"].clone()))
        .collect()
}

/// A notice's data; `asOfEntryId` is the client's one seeded entry (the seed appends them in
/// client order, one each for these clients).
async fn notice(
    seeded: &Seeded,
    client: i64,
    days_ahead: u64,
    notice_days: u32,
    points: &str,
) -> (i64, Value) {
    let newest = seeded
        .database
        .count(&format!(
            "SELECT max(id) AS n FROM point_entries WHERE client_id = {client}"
        ))
        .await;
    let date = point_service::riyadh::text(seeded.today + Days::new(days_ahead));
    (
        client,
        json!({"points": points, "asOfEntryId": newest, "daysBefore": notice_days, "expiryDate": date}),
    )
}

#[tokio::test]
async fn each_client_gets_each_notice_once_across_the_riyadh_midnight_and_a_leap_day() {
    let seeded = seeded().await;
    let (code, out, err) = expire_points(seeded.database.url(), None).await;
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.starts_with("expired: 1 clients, 5 points"), "{out}");
    let expected = vec![
        notice(&seeded, 3001, 3, 7, "10").await,
        notice(&seeded, 3004, 7, 7, "40.125").await,
        notice(&seeded, 3002, 0, 1, "20.5").await,
        notice(&seeded, 3003, 1, 1, "30").await,
    ];
    assert_eq!(expiring_events(&seeded.database).await, expected);

    // Points that reach the expired client after today's expiry leave its date passed: no
    // notice. And the job run again the same day (a retried CronJob, a person) sends nothing new.
    seeded
        .database
        .execute(
            "INSERT INTO point_accounts (client_id) VALUES (3007) ON CONFLICT DO NOTHING; \
             BEGIN; SELECT 1 FROM point_accounts WHERE client_id = 3007 FOR UPDATE; \
             INSERT INTO point_entries (client_id, kind, points, reference) \
             VALUES (3007, 'adjustment', 5, 'test:after-the-expiry'); \
             UPDATE point_accounts SET balance = balance + 5 WHERE client_id = 3007; COMMIT;",
        )
        .await;
    let (code, out, err) = expire_points(seeded.database.url(), None).await;
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(expiring_events(&seeded.database).await, expected);
    assert_eq!(
        seeded
            .database
            .count("SELECT count(*) AS n FROM expiry_notices")
            .await,
        4
    );
}

#[tokio::test]
async fn the_notices_are_a_setting_and_a_bad_one_changes_nothing() {
    let seeded = seeded().await;
    for bad in ["7,x", "400", "1,1", "-1", "+7", "7,,1", " , "] {
        let (code, _, err) = expire_points(seeded.database.url(), Some(bad)).await;
        assert_eq!(code, 2, "{bad}: {err}");
        assert!(err.contains("EXPIRY_NOTICE_DAYS"), "{err}");
    }
    assert_eq!(
        seeded
            .database
            .count("SELECT count(*) AS n FROM point_entries WHERE kind = 'expiry'")
            .await,
        0,
        "a bad setting is refused before anything expires"
    );
    // Empty: no notices.
    let (code, out, err) = expire_points(seeded.database.url(), Some("")).await;
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(expiring_events(&seeded.database).await, []);
    // Only a 3-day notice: it covers the last day too, but not a date 7 days ahead.
    let (code, out, err) = expire_points(seeded.database.url(), Some("3")).await;
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(
        expiring_events(&seeded.database).await,
        [
            notice(&seeded, 3001, 3, 3, "10").await,
            notice(&seeded, 3002, 0, 3, "20.5").await,
            notice(&seeded, 3003, 1, 3, "30").await,
        ]
    );
}
