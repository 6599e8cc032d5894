//! The two pay routes: their check order and the payment service's faults.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::helpers::*;

async fn checkout(app: &TestApp) -> String {
    let (_, order) = app.order(SARA, &order_body(OMAR, "checkout")).await;
    order["correlation_id"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn a_card_payment_forwards_the_card_and_passes_the_answer_through() {
    let app = spawn_app().await;
    let id = checkout(&app).await;
    let (status, body) = app
        .pay_card(&id, SARA, &json!({"id": "card_1", "cvv": "123"}))
        .await;
    assert_eq!(
        (status, body),
        (
            200,
            json!({"id": "pay_123", "status": "pending", "redirect_url": "http://sandbox/3ds/pay_123"})
        )
    );
    let sent = app.payments.lock().unwrap()[0].1.clone();
    assert_eq!(
        sent,
        json!({"reference": id, "amount_minor": 1500, "currency": "SAR", "customer_id": SARA,
               "source": {"type": "card", "card_id": "card_1", "cvv": "123"}})
    );
    let (_, order) = app.get_order(&id, SARA).await;
    assert_eq!(
        order["status"], "initial_order",
        "the pay route never moves the order"
    );
    let noted = "SELECT count(*) AS n FROM point_orders \
         WHERE payment_reference = 'pay_123' AND payment_provider IS NOT NULL";
    assert_eq!(app.count(noted).await, 1);
}

#[tokio::test]
async fn a_session_ignores_other_keys_and_accepts_an_empty_body() {
    let app = spawn_app().await;
    let id = checkout(&app).await;
    let (status, body) = app
        .pay_session(
            &id,
            SARA,
            &json!({"rememberMe": true, "payment_type": "x", "point_order_id": 1}),
        )
        .await;
    assert_eq!(
        (status, body),
        (200, json!({"id": "ses_1", "session_token": "tok_abc"}))
    );
    let response = app
        .client
        .post(app.url(&paths::pay_session(&id)))
        .bearer_auth(token(SARA))
        .send()
        .await
        .unwrap();
    assert_eq!(answer(response).await.0, 200);
    let sent: Vec<Value> = app
        .payments
        .lock()
        .unwrap()
        .iter()
        .map(|(_, b)| b["remember_me"].clone())
        .collect();
    assert_eq!(sent, [json!(true), json!(false)]);
}

#[tokio::test]
async fn with_the_flag_off_both_routes_are_403_before_any_read() {
    let app = spawn_app_with(Options {
        flags: point_service::config::Flags {
            point_orders: true,
            card_payments: false,
        },
        ..Options::default()
    })
    .await;
    let unknown = "0f1c1f9e-2d0b-4b43-9a52-5d2f0c7e8a11";
    let forbidden = (
        403,
        error_b("FORBIDDEN", "card payment for point orders is disabled"),
    );
    assert_eq!(
        app.pay_card(unknown, SARA, &json!({"id": "c", "cvv": "123"}))
            .await,
        forbidden
    );
    assert_eq!(app.pay_session(unknown, SARA, &json!({})).await, forbidden);
}

#[tokio::test]
async fn someone_elses_or_a_missing_order_is_404_and_a_point_order_is_not_payable() {
    let app = spawn_app().await;
    let id = checkout(&app).await;
    let not_found = (404, error_b("NOT_FOUND", "point order not found"));
    assert_eq!(
        app.pay_card(&id, OMAR, &json!({"id": "c", "cvv": "123"}))
            .await,
        not_found,
        "the recipient"
    );
    assert_eq!(
        app.pay_session("0f1c1f9e-2d0b-4b43-9a52-5d2f0c7e8a11", SARA, &json!({}))
            .await,
        not_found
    );
    let (_, point) = app.order(SARA, &order_body(OMAR, "point")).await;
    let point_id = point["correlation_id"].as_str().unwrap();
    assert_eq!(
        app.pay_session(point_id, SARA, &json!({})).await,
        (
            400,
            error_b(
                "VALIDATION_ERROR",
                &format!("point order {point_id} is not a checkout order")
            )
        )
    );
}

#[tokio::test]
async fn successful_and_failed_orders_are_409() {
    let app = spawn_app().await;
    let id = checkout(&app).await;
    app.sql(&format!(
        "UPDATE point_orders SET status = 'successful', payment_status = 'CAPTURED' \
         WHERE correlation_id = '{id}'"
    ))
    .await;
    assert_eq!(
        app.pay_session(&id, SARA, &json!({})).await,
        (
            409,
            error_b("CONFLICT", &format!("point order {id} is already paid"))
        )
    );
    let failed = checkout(&app).await;
    app.sql(&format!(
        "UPDATE point_orders SET status = 'payment_failed', payment_status = 'FAILED' \
         WHERE correlation_id = '{failed}'"
    ))
    .await;
    assert_eq!(
        app.pay_card(&failed, SARA, &json!({"id": "c", "cvv": "123"}))
            .await,
        (
            409,
            error_b(
                "CONFLICT",
                &format!("point order {failed} payment failed; create a new order")
            )
        )
    );
    assert!(app.payments.lock().unwrap().is_empty());
}

#[tokio::test]
async fn a_bad_card_body_is_400_with_details() {
    let app = spawn_app().await;
    let id = checkout(&app).await;
    let (status, body) = app
        .pay_card(&id, SARA, &json!({"id": "", "cvv": "12a"}))
        .await;
    assert_eq!(status, 400);
    assert_eq!(body["error"]["message"], "Invalid pay body");
    assert_eq!(
        keys(&body["error"]["details"]["fieldErrors"]),
        ["id", "cvv"]
    );
}

#[tokio::test]
async fn a_4xx_passes_through_and_5xx_timeout_or_refusal_are_500() {
    let app = spawn_app().await;
    let id = checkout(&app).await;
    let (status, body) = app
        .pay_card(&id, SARA, &json!({"id": "fail4xx-card", "cvv": "123"}))
        .await;
    assert_eq!(
        (status, body),
        (
            402,
            json!({"error": "card_declined", "message": "insufficient funds"})
        )
    );

    let internal = (500, error_b("INTERNAL_ERROR", "Internal server error"));
    assert_eq!(
        app.pay_card(&id, SARA, &json!({"id": "fail5xx-card", "cvv": "123"}))
            .await,
        internal
    );
    let started = Instant::now();
    assert_eq!(
        app.pay_card(&id, SARA, &json!({"id": "hang-card", "cvv": "123"}))
            .await,
        internal
    );
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "PAYMENT_SERVICE_TIMEOUT_MS was not applied"
    );
}

#[tokio::test]
async fn a_refused_connection_is_500() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let app = spawn_app_with(Options {
        payment_url: Some(format!("http://127.0.0.1:{closed}")),
        ..Options::default()
    })
    .await;
    let id = checkout(&app).await;
    assert_eq!(
        app.pay_session(&id, SARA, &json!({})).await,
        (500, error_b("INTERNAL_ERROR", "Internal server error"))
    );
}
