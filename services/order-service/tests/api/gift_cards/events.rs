//! The catalog's events (`outbox`): a credited redemption and a replaced earn-rate table,
//! each written with its change and sent by the running service's publisher to a real NATS;
//! none for a wrong code, a redemption whose credit has not landed, or a refused table.

use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};
use testkit::nats::NatsServer;

use crate::back_office::call;
use crate::helpers::*;

use super::ledger::*;

/// The outbox's rows as (type, client, data), in id order.
async fn outbox(app: &TestApp) -> Vec<(String, Value, Value)> {
    let rows: Vec<Value> = serde_json::from_str(
        &app.database
            .rows_json("SELECT type, client_id, data FROM event_outbox ORDER BY id")
            .await,
    )
    .unwrap();
    rows.into_iter()
        .map(|row| {
            (
                row["type"].as_str().unwrap().to_owned(),
                row["client_id"].clone(),
                row["data"].clone(),
            )
        })
        .collect()
}

#[tokio::test]
async fn a_credited_redemption_and_a_replaced_table_are_events_and_nothing_else_is() {
    let nats = NatsServer::start();
    let ledger = Ledger::start();
    let mut options = on_ledger(&ledger, false);
    options.events.nats_url = Some(nats.url());
    options.events.poll = Duration::from_millis(20);
    let app = spawn_app_with(options).await;

    // Refused or not yet credited: no event.
    assert_eq!(app.redeem(1001, "NO-SUCH-CODE").await.0, 404);
    ledger.fail_next(1);
    assert_eq!(app.redeem(1001, "WELCOME-100").await.0, 502);
    let (status, table) = call(Method::GET, "/earn-rates").send(&app).await;
    assert_eq!(status, 200, "{table}");
    let stale = json!({"rates": [{"amount_from": 0, "amount_to": null, "point_earn": 1}],
                       "version": table["version"].as_i64().unwrap() + 1});
    assert_eq!(
        call(Method::PUT, "/earn-rates")
            .body(stale)
            .send(&app)
            .await
            .0,
        409
    );
    assert_eq!(outbox(&app).await, []);

    // Credited (the owner's retry lands), another code, the table replaced.
    assert_eq!(app.redeem(1001, "WELCOME-100").await.0, 200);
    assert_eq!(app.redeem(1002, "RAMADAN-250").await.0, 200);
    let rates = json!({"rates": [{"amount_from": 0, "amount_to": null, "point_earn": "2.5"}],
                       "version": table["version"]});
    let (status, replaced) = call(Method::PUT, "/earn-rates")
        .body(rates)
        .send(&app)
        .await;
    assert_eq!(status, 200, "{replaced}");

    let written = outbox(&app).await;
    let welcome = count(
        &app,
        "SELECT id AS n FROM gift_card_redemptions WHERE code = 'WELCOME-100'",
    )
    .await;
    let ramadan = count(
        &app,
        "SELECT id AS n FROM gift_card_redemptions WHERE code = 'RAMADAN-250'",
    )
    .await;
    assert_eq!(
        written,
        [
            (
                "giftcode.redeemed".to_owned(),
                json!(1001),
                json!({"redemptionId": welcome, "code": "WELCOME-100",
                       "batchId": null, "points": "100", "creditedTo": "point_service"})
            ),
            (
                "giftcode.redeemed".to_owned(),
                json!(1002),
                json!({"redemptionId": ramadan, "code": "RAMADAN-250",
                       "batchId": null, "points": "250", "creditedTo": "point_service"})
            ),
            (
                "catalog.changed".to_owned(),
                Value::Null,
                json!({"auditId": written[2].2["auditId"], "action": "earn-rates.replace",
                       "record": "earn-rates", "after": replaced})
            ),
        ]
    );

    // The service's own publisher sends them: subject the client, or none.
    wait_until_none(
        &app,
        "SELECT count(*) AS n FROM event_outbox WHERE published_at IS NULL",
        "events still unpublished",
    )
    .await;
    let received = nats.events().await;
    let sent: Vec<(&str, Option<&Value>, &Value)> = received
        .iter()
        .map(|m| {
            assert_eq!(m.event["source"], "/loyalty/order-service");
            (m.subject.as_str(), m.event.get("subject"), &m.event["data"])
        })
        .collect();
    assert_eq!(
        sent,
        [
            (
                "loyalty.giftcode.redeemed",
                Some(&json!("1001")),
                &written[0].2
            ),
            (
                "loyalty.giftcode.redeemed",
                Some(&json!("1002")),
                &written[1].2
            ),
            ("loyalty.catalog.changed", None, &written[2].2),
        ]
    );
    testkit::nats::record_samples(env!("CARGO_TARGET_TMPDIR"), "order-service", &received);
}

#[tokio::test]
async fn the_outbox_check_is_the_order_services_event_types() {
    let app = spawn_app().await;
    assert_eq!(
        app.database.check_values("event_outbox.type").await,
        ["catalog.changed", "giftcode.redeemed"]
    );
}

/// Each kind's change, rolled back, leaves no event; the same change committed leaves exactly
/// one (so the first half can fail).
#[tokio::test]
async fn each_kind_rolled_back_leaves_no_event_and_committed_leaves_one() {
    let app = spawn_app().await;
    app.sql(
        "INSERT INTO gift_card_redemptions (code, client_id, points, credit_target, credit_reference) \
         VALUES ('WELCOME-100', 1001, 100, 'point_service', 'gift-card:WELCOME-100')",
    )
    .await;
    let changes = [
        (
            "giftcode.redeemed",
            "UPDATE gift_card_redemptions SET status = 'credited', credited_at = now() \
             WHERE code = 'WELCOME-100'",
        ),
        (
            "catalog.changed",
            "INSERT INTO back_office_audit (operator_id, role, action, subject, before, after) \
             VALUES ('7', 'admin', 'earn-rates.replace', 'earn-rates', 'null', '{}')",
        ),
    ];
    for (kind, change) in changes {
        let of_kind = format!("SELECT count(*) AS n FROM event_outbox WHERE type = '{kind}'");
        app.sql(&format!("BEGIN; {change}; ROLLBACK;")).await;
        assert_eq!(count(&app, &of_kind).await, 0, "{kind} rolled back");
        app.sql(&format!("BEGIN; {change}; COMMIT;")).await;
        assert_eq!(count(&app, &of_kind).await, 1, "{kind} committed");
    }
}
