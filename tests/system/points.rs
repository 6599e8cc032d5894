//! The point service with the real auth service in front of its caller lookup, a fake
//! payment service (a real HTTP server) behind it, and the demo fixture: balance, a gift
//! paid with points, a card payment captured by the signed webhook. The card's cvv must
//! reach the payment service and appear in no log line and no table.

use std::sync::{Arc, Mutex};

use actix_web::{App, HttpResponse, web};
use e2e::demo::{OFFER_100, SARA};
use e2e::{Service, demo_database};
use serde_json::{Value, json};

const CVV: &str = "9753";

fn fake_payment_service(seen: Arc<Mutex<Vec<Value>>>) -> String {
    server::spawn_local(move || {
        let seen = seen.clone();
        App::new().route(
            "/v1/payments",
            web::post().to(move |body: web::Json<Value>| {
                let seen = seen.clone();
                async move {
                    seen.lock().unwrap().push(body.0);
                    HttpResponse::Ok().json(json!({
                        "id": "pay_e2e",
                        "status": "pending",
                        "redirect_url": "http://sandbox/3ds",
                    }))
                }
            }),
        )
    })
    .unwrap()
}

fn signature(body: &str) -> String {
    let secret = e2e::dev("PAYMENT_WEBHOOK_SECRET");
    testkit::tokens::webhook_signature(secret, testkit::tokens::now(), body)
}

#[tokio::test]
async fn points_through_the_real_auth_service_and_a_card_payment_without_leaking_the_cvv() {
    let auth_db = demo_database(&["auth-service"], "auth").await;
    let points_db = demo_database(&["point-service"], "points").await;
    let auth = Service::start("auth-service", auth_db.url(), &[]).await;
    let seen: Arc<Mutex<Vec<Value>>> = Arc::default();
    let payments = fake_payment_service(seen.clone());
    let points = Service::start(
        "point-service",
        points_db.url(),
        &[
            ("AUTH_SERVICE_URL", &auth.base),
            ("PAYMENT_SERVICE_URL", &payments),
            ("POINT_ORDER_POINT_ENABLED", "true"),
            ("POINT_ORDER_CARD_ENABLED", "true"),
            ("RUST_LOG", "debug"),
        ],
    )
    .await;
    let client = points.client();
    let url = |path: &str| format!("{}/api/v2/client{path}", points.base);

    // The balance of the demo's Sara: 500.5 + 250 - 120.
    let balance: Value = client
        .get(url("/points"))
        .bearer_auth(SARA)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(balance["points"], "630.5");

    // A primary token is refused on the point routes (the auth service's /users takes legacy tokens).
    let reset = reqwest::get(format!(
        "{}/api/v1/clients/reset-otp?contact_phone=%2B966500000001",
        auth.base
    ))
    .await
    .unwrap();
    assert_eq!(reset.status(), 200);
    let login: Value = reqwest::get(format!(
        "{}/api/v1/clients/verify-otp?contact_phone=%2B966500000001&code=1234",
        auth.base
    ))
    .await
    .unwrap()
    .json()
    .await
    .unwrap();
    let primary = login["data"]["access_token"].as_str().unwrap();
    let refused = client
        .get(url("/points"))
        .bearer_auth(primary)
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 401);
    assert_eq!(
        refused.json::<Value>().await.unwrap()["error"]["message"],
        "Invalid or expired token"
    );

    // A gift to Omar paid with points.
    let gift = json!({"point_offer_id": OFFER_100, "to_client_id": 1002, "payment_type": "point"});
    let order: Value = client
        .post(url("/point-orders"))
        .bearer_auth(SARA)
        .json(&gift)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(order["status"], "successful", "{order}");
    let balance: Value = client
        .get(url("/points"))
        .bearer_auth(SARA)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(balance["points"], "510.5");

    // The same bought by card for Omar, captured by the webhook.
    let checkout =
        json!({"point_offer_id": OFFER_100, "to_client_id": 1002, "payment_type": "checkout"});
    let order: Value = client
        .post(url("/point-orders"))
        .bearer_auth(SARA)
        .json(&checkout)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let id = order["correlation_id"].as_str().unwrap();
    let pay = client
        .post(url(&format!("/point-orders/{id}/pay/card")))
        .bearer_auth(SARA)
        .json(&json!({"id": "card_demo", "cvv": CVV}))
        .send()
        .await
        .unwrap();
    assert_eq!(pay.status(), 200);
    assert_eq!(
        seen.lock().unwrap()[0]["source"]["cvv"],
        CVV,
        "the cvv reaches the payment service"
    );

    let event = json!({"id": "evt_e2e", "type": "payment_captured",
                       "data": {"reference": id, "payment_id": "pay_e2e", "provider": "sandbox",
                                "amount_minor": 1500, "currency": "SAR"}})
    .to_string();
    let hook = client
        .post(format!("{}/webhooks/v1/payments", points.base))
        .header("x-signature", signature(&event))
        .header("content-type", "application/json")
        .body(event)
        .send()
        .await
        .unwrap();
    assert_eq!(hook.status(), 200);
    let order: Value = client
        .get(url(&format!("/point-orders/{id}")))
        .bearer_auth(SARA)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        (order["status"].clone(), order["payment_status"].clone()),
        (json!("successful"), json!("CAPTURED"))
    );

    // Nothing kept the cvv: no log line (debug level) and no row. Every line written until
    // now, read off the pipes first.
    let logs = points.log().written().await;
    assert!(logs.len() > 10, "expected debug logs, got {}", logs.len());
    for line in &logs {
        assert!(
            !line.to_lowercase().contains("cvv"),
            "a log line mentions the cvv: {line}"
        );
        assert!(
            !line.contains(&format!("\"{CVV}\"")) && !line.contains(&format!("={CVV}")),
            "a log line holds the cvv: {line}"
        );
    }
    for table in [
        "point_orders",
        "payment_events",
        "point_entries",
        "idempotency_keys",
    ] {
        let found = points_db
            .count(&format!(
                "SELECT count(*) AS n FROM {table} t WHERE row_to_json(t)::text LIKE '%{CVV}%'"
            ))
            .await;
        assert_eq!(found, 0, "{table} holds the cvv");
    }
}
