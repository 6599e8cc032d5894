//! Payment attempts through the real pay routes and the real webhook: the newer attempt
//! decides, a capture always applies to a payable order, and a webhook that overtakes the
//! pay route's answer is decided once that answer is recorded.

use std::time::Duration;

use serde_json::{Value, json};

use crate::helpers::*;

fn now() -> i64 {
    chrono::Utc::now().timestamp()
}

async fn checkout_for_omar(app: &TestApp) -> String {
    let (_, order) = app.order(SARA, &order_body(OMAR, "checkout")).await;
    order["correlation_id"].as_str().unwrap().to_owned()
}

/// Pays with the card `card`; the fake payment service answers `tap-x` with `pay_x`.
async fn pay(app: &TestApp, id: &str, card: &str) -> (u16, Value) {
    app.pay_card(id, SARA, &json!({"id": card, "cvv": "123"}))
        .await
}

fn event(id: &str, kind: &str, reference: &str, payment_id: &str) -> Value {
    json!({"id": id, "type": kind, "data": {"reference": reference, "payment_id": payment_id,
        "provider": "sandbox", "amount_minor": 1500, "currency": "SAR"}})
}

async fn deliver(app: &TestApp, event: &Value) -> (u16, Value) {
    app.webhook(event, WEBHOOK_SECRET, now()).await
}

async fn outcome(app: &TestApp, event: &Value) -> Value {
    let (status, body) = deliver(app, event).await;
    assert_eq!(status, 200, "{body}");
    body["outcome"].clone()
}

async fn status_of(app: &TestApp, id: &str) -> (Value, Value) {
    let (_, order) = app.get_order(id, SARA).await;
    (order["status"].clone(), order["payment_status"].clone())
}

#[tokio::test]
async fn each_pay_answer_is_recorded_as_an_attempt() {
    let app = spawn_app().await;
    let id = checkout_for_omar(&app).await;
    assert_eq!(pay(&app, &id, "tap-1").await.0, 200);
    assert_eq!(pay(&app, &id, "fail4xx").await.0, 402);
    assert_eq!(pay(&app, &id, "fail5xx").await.0, 500);
    let session = app.pay_session(&id, SARA, &json!({})).await;
    assert_eq!(session.0, 200);
    let recorded = app
        .count(&format!(
            "SELECT count(*) AS n FROM (
               SELECT string_agg(kind || ':' || state || ':' || COALESCE(payment_id, '-'), ',' ORDER BY id) AS a
               FROM payment_attempts WHERE correlation_id = '{id}' AND answered_at >= started_at) t
             WHERE a = 'card:answered:pay_1,card:refused:-,card:lost:-,session:answered:ses_1'"
        ))
        .await;
    assert_eq!(
        recorded, 1,
        "one attempt per answer, with its kind, state and id"
    );
}

/// A double tap: the older attempt's decline is recorded and leaves the order payable, the
/// newer attempt's capture pays it.
#[tokio::test]
async fn a_double_tap_with_the_older_attempt_declined_is_paid_by_the_newer() {
    let app = spawn_app().await;
    let id = checkout_for_omar(&app).await;
    assert_eq!(pay(&app, &id, "tap-1").await.0, 200);
    assert_eq!(pay(&app, &id, "tap-2").await.0, 200);
    assert_eq!(
        outcome(&app, &event("evt_d1", "payment_declined", &id, "pay_1")).await,
        "superseded"
    );
    assert_eq!(status_of(&app, &id).await.0, "initial_order");
    assert_eq!(
        outcome(&app, &event("evt_c2", "payment_captured", &id, "pay_2")).await,
        "captured"
    );
    assert_eq!(
        status_of(&app, &id).await,
        (json!("successful"), json!("CAPTURED"))
    );
    assert_eq!(app.balance_of(OMAR).await, "100");
    assert_eq!(
        app.count("SELECT count(*) AS n FROM unapplied_captures")
            .await,
        0
    );
}

/// Reordered: the newer attempt's capture arrives first, the older's decline after it.
#[tokio::test]
async fn a_decline_arriving_after_the_capture_changes_nothing() {
    let app = spawn_app().await;
    let id = checkout_for_omar(&app).await;
    pay(&app, &id, "tap-1").await;
    pay(&app, &id, "tap-2").await;
    assert_eq!(
        outcome(&app, &event("evt_c2", "payment_captured", &id, "pay_2")).await,
        "captured"
    );
    assert_eq!(
        outcome(&app, &event("evt_d1", "payment_declined", &id, "pay_1")).await,
        "not_pending"
    );
    assert_eq!(
        outcome(&app, &event("evt_d2", "payment_declined", &id, "pay_2")).await,
        "not_pending",
        "even a decline of the very payment that was captured"
    );
    assert_eq!(status_of(&app, &id).await.0, "successful");
    assert_eq!(app.balance_of(OMAR).await, "100");
}

/// The newest attempt's decline fails the order; the older attempt's capture that comes
/// later took money without points: listed, not applied.
#[tokio::test]
async fn a_capture_after_the_deciding_decline_is_listed_not_applied() {
    let app = spawn_app().await;
    let id = checkout_for_omar(&app).await;
    pay(&app, &id, "tap-1").await;
    pay(&app, &id, "tap-2").await;
    assert_eq!(
        outcome(&app, &event("evt_d2", "payment_declined", &id, "pay_2")).await,
        "declined"
    );
    assert_eq!(
        status_of(&app, &id).await,
        (json!("payment_failed"), json!("FAILED"))
    );
    assert_eq!(
        pay(&app, &id, "tap-3").await.0,
        409,
        "a failed order takes no new attempt"
    );
    assert_eq!(
        outcome(&app, &event("evt_c1", "payment_captured", &id, "pay_1")).await,
        "payment_failed"
    );
    assert_eq!(status_of(&app, &id).await.0, "payment_failed");
    assert_eq!(app.balance_of(OMAR).await, "0");
    assert_eq!(
        app.count(&format!(
            "SELECT count(*) AS n FROM unapplied_captures WHERE event_id = 'evt_c1' AND correlation_id = '{id}'
               AND payment_id = 'pay_1' AND amount_minor = 1500 AND reason = 'payment_failed' AND resolved_at IS NULL"
        ))
        .await,
        1
    );
    assert_eq!(
        app.count(
            "SELECT count(*) AS n FROM payment_attempts WHERE state = 'started' OR payment_id = 'pay_3'"
        )
        .await,
        0,
        "the refused pay call recorded no attempt"
    );
}

#[tokio::test]
async fn a_decline_naming_no_attempt_fails_the_order() {
    let app = spawn_app().await;
    let id = checkout_for_omar(&app).await;
    pay(&app, &id, "tap-1").await;
    assert_eq!(
        outcome(
            &app,
            &event("evt_d", "payment_declined", &id, "pay_unknown")
        )
        .await,
        "declined"
    );
    assert_eq!(status_of(&app, &id).await.0, "payment_failed");
}

/// Duplicates: the same event id again does nothing; the same capture under another event
/// id is no second charge and is not listed for refund.
#[tokio::test]
async fn duplicate_events_credit_once_and_list_nothing() {
    let app = spawn_app().await;
    let id = checkout_for_omar(&app).await;
    pay(&app, &id, "tap-1").await;
    let capture = event("evt_c1", "payment_captured", &id, "pay_1");
    assert_eq!(outcome(&app, &capture).await, "captured");
    assert_eq!(outcome(&app, &capture).await, "duplicate_event");
    assert_eq!(
        outcome(
            &app,
            &event("evt_c1_again", "payment_captured", &id, "pay_1")
        )
        .await,
        "duplicate_capture"
    );
    let decline = event("evt_d1", "payment_declined", &id, "pay_1");
    assert_eq!(outcome(&app, &decline).await, "not_pending");
    assert_eq!(outcome(&app, &decline).await, "duplicate_event");
    assert_eq!(app.balance_of(OMAR).await, "100");
    assert_eq!(
        app.count("SELECT count(*) AS n FROM unapplied_captures")
            .await,
        0
    );
    assert_eq!(
        app.count("SELECT count(*) AS n FROM payment_events").await,
        3
    );
}

/// The payment service answers the pay call and sends the webhook at once: the webhook may
/// overtake the answer. A decline then waits (503, nothing recorded, the sender retries) and
/// is decided once the answer is recorded; a capture applies at once.
#[tokio::test]
async fn a_decline_that_overtakes_the_pay_answer_is_decided_on_its_retry() {
    let app = spawn_app_with(Options {
        payment_timeout: Duration::from_secs(30),
        ..Options::default()
    })
    .await;
    let id = checkout_for_omar(&app).await;
    let paying = {
        let (client, url) = (app.client.clone(), app.url(&paths::pay_card(&id)));
        tokio::spawn(async move {
            answer(
                client
                    .post(url)
                    .bearer_auth(token(SARA))
                    .json(&json!({"id": "gate-1", "cvv": "123"}))
                    .send()
                    .await
                    .unwrap(),
            )
            .await
        })
    };
    app.gate.asked().await;
    let decline = event("evt_d1", "payment_declined", &id, "pay_1");
    let (status, body) = deliver(&app, &decline).await;
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["error"]["code"], "SERVICE_UNAVAILABLE");
    assert_eq!(status_of(&app, &id).await.0, "initial_order");
    assert_eq!(
        app.count("SELECT count(*) AS n FROM payment_events").await,
        0,
        "nothing recorded, so the retry is decided afresh"
    );
    app.gate.release();
    assert_eq!(paying.await.unwrap().0, 200);
    assert_eq!(outcome(&app, &decline).await, "declined");
    assert_eq!(status_of(&app, &id).await.0, "payment_failed");
}

#[tokio::test]
async fn a_capture_that_overtakes_the_pay_answer_applies() {
    let app = spawn_app_with(Options {
        payment_timeout: Duration::from_secs(30),
        ..Options::default()
    })
    .await;
    let id = checkout_for_omar(&app).await;
    let paying = {
        let (client, url) = (app.client.clone(), app.url(&paths::pay_card(&id)));
        tokio::spawn(async move {
            client
                .post(url)
                .bearer_auth(token(SARA))
                .json(&json!({"id": "gate-1", "cvv": "123"}))
                .send()
                .await
                .unwrap()
                .status()
                .as_u16()
        })
    };
    app.gate.asked().await;
    assert_eq!(
        outcome(&app, &event("evt_c1", "payment_captured", &id, "pay_1")).await,
        "captured"
    );
    app.gate.release();
    assert_eq!(paying.await.unwrap(), 200);
    assert_eq!(status_of(&app, &id).await.0, "successful");
    assert_eq!(app.balance_of(OMAR).await, "100");
    assert_eq!(
        app.count("SELECT count(*) AS n FROM payment_attempts WHERE state = 'answered' AND payment_id = 'pay_1'")
            .await,
        1,
        "the answer is still recorded after the capture"
    );
}

/// A pay route that stopped after asking (a crash) leaves its attempt `started`; once the
/// attempt's window has passed it counts as lost: a decline of an id never recorded is put
/// on it and fails the order, and an older attempt's decline does not.
#[tokio::test]
async fn an_attempt_left_in_flight_by_a_stopped_pay_route_counts_as_lost() {
    let app = spawn_app().await;
    let id = checkout_for_omar(&app).await;
    pay(&app, &id, "tap-1").await;
    // What a crash between asking and recording leaves, its window long past.
    app.sql(&format!(
        "INSERT INTO payment_attempts (correlation_id, kind, state, started_at)
         VALUES ('{id}', 'card', 'started', now() - interval '1 hour')"
    ))
    .await;
    assert_eq!(
        outcome(&app, &event("evt_d1", "payment_declined", &id, "pay_1")).await,
        "superseded"
    );
    assert_eq!(status_of(&app, &id).await.0, "initial_order");
    assert_eq!(
        outcome(
            &app,
            &event("evt_d2", "payment_declined", &id, "pay_never_seen")
        )
        .await,
        "declined"
    );
    assert_eq!(status_of(&app, &id).await.0, "payment_failed");
}
