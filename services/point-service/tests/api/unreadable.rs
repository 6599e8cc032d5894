//! A correctly signed event whose body is not an event is money that may have been taken:
//! it is recorded and (unless a decline) listed for refund as `unreadable`, once, and
//! still answered 400.

use point_service::reports::audit;
use serde_json::{Value, json};

use crate::helpers::*;
use crate::unapplied::unapplied_metric;

fn now() -> i64 {
    chrono::Utc::now().timestamp()
}

async fn checkout_for_omar(app: &TestApp) -> String {
    let (_, order) = app.order(SARA, &order_body(OMAR, "checkout")).await;
    order["correlation_id"].as_str().unwrap().to_owned()
}

fn capture(id: &str, reference: &str, payment_id: &str, amount: Value) -> String {
    json!({"id": id, "type": "payment_captured", "data": {"reference": reference,
        "payment_id": payment_id, "provider": "sandbox", "amount_minor": amount, "currency": "SAR"}})
    .to_string()
}

#[tokio::test]
async fn a_signed_capture_that_cannot_be_read_is_recorded_and_listed_once() {
    let app = spawn_app().await;
    let order = checkout_for_omar(&app).await;
    let before = unapplied_metric(&app, "unreadable").await;
    let bodies = [
        capture("evt_float", &order, "pay_float", json!(1500.0)),
        capture("evt_text", &order, "pay_text", json!("1500")),
        json!({"id": "evt_num_pay", "type": "payment_captured", "data": {"reference": order,
            "payment_id": 987654321, "amount_minor": 1500, "currency": "SAR"}})
        .to_string(),
        json!({"id": 77, "type": "payment_captured", "data": {"reference": order,
            "payment_id": "pay_num_id", "amount_minor": 1500, "currency": "SAR"}})
        .to_string(),
        json!({"id": "evt_no_ref", "type": "payment_captured", "data": {"payment_id": "pay_no_ref",
            "amount_minor": 1500, "currency": "SAR"}})
        .to_string(),
        json!({"data": {"reference": order, "payment_id": "pay_no_id", "amount_minor": 1500}})
            .to_string(),
        "not json at all".to_owned(),
        // A decline takes no money: recorded, not listed.
        json!({"id": "evt_decline", "type": "payment_declined", "data": {"payment_id": 5}})
            .to_string(),
    ];
    for round in ["first", "again"] {
        for body in &bodies {
            let (status, answer) = app.webhook_raw(body, WEBHOOK_SECRET, now()).await;
            assert_eq!(status, 400, "{round}: {body}: {answer}");
        }
        assert_eq!(
            app.count("SELECT count(*) AS n FROM payment_events WHERE outcome = 'unreadable'")
                .await,
            8,
            "{round}: each recorded once"
        );
        assert_eq!(
            app.count("SELECT count(*) AS n FROM unapplied_captures WHERE reason = 'unreadable'")
                .await,
            7,
            "{round}: each capture listed once"
        );
        assert_eq!(
            unapplied_metric(&app, "unreadable").await - before,
            7,
            "{round}: counted once"
        );
    }
    // What could be read is kept for whoever refunds.
    assert_eq!(
        app.count(&format!(
            "SELECT count(*) AS n FROM unapplied_captures WHERE
               (event_id = 'evt_float' AND payment_id = 'pay_float' AND amount_minor IS NULL
                AND correlation_id = '{order}')
            OR (event_id = 'evt_num_pay' AND payment_id = '987654321' AND amount_minor = 1500)
            OR (event_id = '77' AND payment_id = 'pay_num_id')
            OR (event_id = 'evt_no_ref' AND reference = '' AND correlation_id IS NULL)
            OR (event_id LIKE 'unreadable:%' AND payment_id = 'pay_no_id' AND reference = '{order}')
            OR (event_id LIKE 'unreadable:%' AND payment_id IS NULL AND reference = '')"
        ))
        .await,
        6
    );
    assert_eq!(app.balance_of(OMAR).await, "0");
    let mut conn = app.database.connect().await;
    let report = audit::run(&mut conn).await.unwrap();
    assert_eq!(report.open_unapplied_captures, 7);
}

#[tokio::test]
async fn an_unreadable_event_of_a_decided_payment_is_no_second_charge() {
    let app = spawn_app().await;
    let paid = checkout_for_omar(&app).await;
    let (status, answer) = app
        .webhook_raw(
            &capture("evt_ok", &paid, "pay_ok", json!(1500)),
            WEBHOOK_SECRET,
            now(),
        )
        .await;
    assert_eq!(
        (status, answer["outcome"].clone()),
        (200, json!("captured"))
    );
    // The credited payment again, unreadable: recorded, not listed (it was credited).
    let (status, _) = app
        .webhook_raw(
            &capture("evt_ok_2", &paid, "pay_ok", json!(1500.0)),
            WEBHOOK_SECRET,
            now(),
        )
        .await;
    assert_eq!(status, 400);
    // A payment first seen unreadable (listed), then readable: not credited on top.
    let open = checkout_for_omar(&app).await;
    app.webhook_raw(
        &capture("evt_u", &open, "pay_u", json!("1500")),
        WEBHOOK_SECRET,
        now(),
    )
    .await;
    let (status, answer) = app
        .webhook_raw(
            &capture("evt_u_2", &open, "pay_u", json!(1500)),
            WEBHOOK_SECRET,
            now(),
        )
        .await;
    assert_eq!(
        (status, answer["outcome"].clone()),
        (200, json!("duplicate_capture"))
    );
    assert_eq!(app.balance_of(OMAR).await, "100");
    assert_eq!(
        app.count("SELECT count(*) AS n FROM unapplied_captures")
            .await,
        1,
        "only pay_u, once"
    );
    let mut conn = app.database.connect().await;
    audit::run(&mut conn).await.unwrap();
}
