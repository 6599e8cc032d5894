//! The sandbox over real HTTP, with a real HTTP server in the point service's place that
//! records each webhook and checks its signature the way the point service does.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on purpose

use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_web::{App, HttpRequest, HttpResponse, web};
use hmac::{Hmac, KeyInit, Mac};
use payment_sandbox::config::Config;
use serde_json::{Value, json};
use server::{CommonConfig, Env};
use sha2::Sha256;

const SECRET: &str = "sandbox-test-secret";

type Received = Arc<Mutex<Vec<Value>>>;

struct Harness {
    base: String,
    http: reqwest::Client,
    received: Received,
    /// The status the fake point service answers webhooks with.
    answer: Arc<Mutex<u16>>,
}

fn verified(req: &HttpRequest, body: &[u8]) -> bool {
    let header = req
        .headers()
        .get("x-signature")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let Some((t, v1)) = header.split_once(",v1=") else {
        return false;
    };
    let t = t.trim_start_matches("t=");
    let now = chrono_now();
    if (now - t.parse::<i64>().unwrap_or(0)).abs() > 300 {
        return false;
    }
    let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(SECRET.as_bytes()).unwrap();
    mac.update(t.as_bytes());
    mac.update(b".");
    mac.update(body);
    mac.verify_slice(&hex::decode(v1).unwrap_or_default())
        .is_ok()
}

fn chrono_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

async fn start(auto_capture: bool) -> Harness {
    let received: Received = Arc::default();
    let answer = Arc::new(Mutex::new(200u16));
    let (sink, status) = (received.clone(), answer.clone());
    let point_service = server::spawn_local(move || {
        let (sink, status) = (sink.clone(), status.clone());
        App::new().route(
            "/webhooks/v1/payments",
            web::post().to(move |req: HttpRequest, body: web::Bytes| {
                let (sink, status) = (sink.clone(), status.clone());
                async move {
                    if !verified(&req, &body) {
                        return HttpResponse::Unauthorized().finish();
                    }
                    sink.lock()
                        .unwrap()
                        .push(serde_json::from_slice(&body).unwrap());
                    let code = *status.lock().unwrap();
                    HttpResponse::build(actix_web::http::StatusCode::from_u16(code).unwrap())
                        .json(json!({"received": true}))
                }
            }),
        )
    })
    .unwrap();

    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let mut env = Env::from_vars([
        ("PAYMENT_WEBHOOK_SECRET", SECRET.to_owned()),
        (
            "POINT_SERVICE_WEBHOOK_URL",
            format!("{point_service}/webhooks/v1/payments"),
        ),
        ("SANDBOX_AUTO_CAPTURE", auto_capture.to_string()),
        ("SANDBOX_PUBLIC_URL", base.clone()),
        ("HTTP_WORKERS", "1".to_owned()),
    ]);
    let common = CommonConfig::from_env(&mut env, "payment-sandbox", 0);
    let config = Config::from_env(&mut env, common);
    let config = env.finish(config).unwrap();
    tokio::spawn(payment_sandbox::build(config, listener).unwrap());
    Harness {
        base,
        http: reqwest::Client::new(),
        received,
        answer,
    }
}

fn payment(card_id: &str) -> Value {
    json!({"reference": "6f1c2a4e-0000-4000-8000-000000000001", "amount_minor": 1500,
           "currency": "SAR", "customer_id": 1001,
           "source": {"type": "card", "card_id": card_id, "cvv": "123"}})
}

impl Harness {
    async fn post(&self, path: &str, body: &Value) -> (u16, Value) {
        let response = self
            .http
            .post(format!("{}{path}", self.base))
            .json(body)
            .send()
            .await
            .unwrap();
        (
            response.status().as_u16(),
            response.json().await.unwrap_or(Value::Null),
        )
    }

    async fn page(&self, method: reqwest::Method, path: &str) -> (u16, String) {
        let response = self
            .http
            .request(method, format!("{}{path}", self.base))
            .send()
            .await
            .unwrap();
        (response.status().as_u16(), response.text().await.unwrap())
    }

    async fn status_of(&self, id: &str) -> String {
        let response = self
            .http
            .get(format!("{}/v1/payments/{id}", self.base))
            .send()
            .await
            .unwrap();
        let body: Value = response.json().await.unwrap();
        body["status"].as_str().unwrap().to_owned()
    }

    /// Waits for the `n`th webhook (webhooks sent in the background arrive a moment later).
    async fn webhook(&self, n: usize) -> Value {
        for _ in 0..100 {
            if let Some(event) = self.received.lock().unwrap().get(n - 1) {
                return event.clone();
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("webhook {n} never arrived");
    }
}

#[tokio::test]
async fn approving_on_the_3ds_page_sends_a_signed_capture() {
    let sandbox = start(false).await;
    let (status, body) = sandbox
        .post("/v1/payments", &payment("card_visa_4242"))
        .await;
    assert_eq!(status, 200);
    assert_eq!(body["status"], "pending");
    let id = body["id"].as_str().unwrap().to_owned();
    let redirect = body["redirect_url"].as_str().unwrap();
    assert_eq!(redirect, format!("{}/3ds/{id}", sandbox.base));

    let (status, page) = sandbox
        .page(reqwest::Method::GET, &format!("/3ds/{id}"))
        .await;
    assert_eq!(status, 200);
    assert!(page.contains("15.00 SAR"), "{page}");
    assert!(
        page.contains(&format!("action=\"/3ds/{id}/approve\"")),
        "{page}"
    );
    assert!(
        page.contains(&format!("action=\"/3ds/{id}/decline\"")),
        "{page}"
    );
    assert!(
        !page.contains("http://") || !page.contains("<script src"),
        "loads nothing from outside"
    );
    assert!(
        sandbox.received.lock().unwrap().is_empty(),
        "nothing is sent before a button"
    );

    let (status, page) = sandbox
        .page(reqwest::Method::POST, &format!("/3ds/{id}/approve"))
        .await;
    assert_eq!(status, 200, "{page}");
    assert_eq!(
        sandbox.webhook(1).await,
        json!({"id": format!("evt_{id}_payment_captured"), "type": "payment_captured",
               "data": {"reference": "6f1c2a4e-0000-4000-8000-000000000001", "payment_id": id,
                        "provider": "sandbox", "amount_minor": 1500, "currency": "SAR"}})
    );
    assert_eq!(sandbox.status_of(&id).await, "captured");

    let (status, _) = sandbox
        .page(reqwest::Method::POST, &format!("/3ds/{id}/decline"))
        .await;
    assert_eq!(status, 409, "a settled payment cannot be settled again");
    assert_eq!(sandbox.received.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn the_decline_button_sends_a_decline() {
    let sandbox = start(false).await;
    let (_, body) = sandbox.post("/v1/payments", &payment("card_1")).await;
    let id = body["id"].as_str().unwrap();
    let (status, _) = sandbox
        .page(reqwest::Method::POST, &format!("/3ds/{id}/decline"))
        .await;
    assert_eq!(status, 200);
    assert_eq!(sandbox.webhook(1).await["type"], "payment_declined");
    assert_eq!(sandbox.status_of(id).await, "declined");
}

#[tokio::test]
async fn card_ids_decline_or_fail() {
    let sandbox = start(false).await;
    let (status, body) = sandbox
        .post("/v1/payments", &payment("decline-insufficient"))
        .await;
    assert_eq!((status, body["status"].as_str()), (200, Some("declined")));
    let event = sandbox.webhook(1).await;
    assert_eq!(event["type"], "payment_declined");
    assert_eq!(event["data"]["payment_id"], body["id"]);

    let (status, body) = sandbox.post("/v1/payments", &payment("fail4xx-card")).await;
    assert_eq!(status, 402);
    assert_eq!(body["error"]["code"], "card_declined");
    let (status, _) = sandbox.post("/v1/payments", &payment("fail5xx")).await;
    assert_eq!(status, 500);
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(
        sandbox.received.lock().unwrap().len(),
        1,
        "failures send no webhook"
    );
}

#[tokio::test]
async fn auto_capture_sends_the_capture_at_once() {
    let sandbox = start(true).await;
    let (status, body) = sandbox.post("/v1/payments", &payment("card_1")).await;
    assert_eq!(status, 200);
    let event = sandbox.webhook(1).await;
    assert_eq!(event["type"], "payment_captured");
    assert_eq!(event["data"]["payment_id"], body["id"]);

    let session = json!({"reference": "ref-2", "amount_minor": 300, "currency": "SAR",
                         "customer_id": 1001, "remember_me": true});
    let (status, body) = sandbox.post("/v1/payment-sessions", &session).await;
    assert_eq!(status, 200);
    assert!(body["session_token"].as_str().unwrap().starts_with("tok_"));
    let event = sandbox.webhook(2).await;
    assert_eq!(
        (event["type"].as_str(), event["data"]["reference"].as_str()),
        (Some("payment_captured"), Some("ref-2"))
    );
}

#[tokio::test]
async fn a_refused_webhook_leaves_the_payment_pending_for_another_try() {
    let sandbox = start(false).await;
    *sandbox.answer.lock().unwrap() = 503;
    let (_, body) = sandbox.post("/v1/payments", &payment("card_1")).await;
    let id = body["id"].as_str().unwrap();
    let (status, page) = sandbox
        .page(reqwest::Method::POST, &format!("/3ds/{id}/approve"))
        .await;
    assert_eq!(status, 502);
    assert!(page.contains("answered 503"), "{page}");
    assert_eq!(sandbox.status_of(id).await, "pending");

    *sandbox.answer.lock().unwrap() = 200;
    let (status, _) = sandbox
        .page(reqwest::Method::POST, &format!("/3ds/{id}/approve"))
        .await;
    assert_eq!(status, 200);
    assert_eq!(sandbox.status_of(id).await, "captured");
    let events = sandbox.received.lock().unwrap().clone();
    assert_eq!(
        events[0]["id"], events[1]["id"],
        "a retry is the same event"
    );
}

#[tokio::test]
async fn bad_requests_get_422_and_unknown_ids_404() {
    let sandbox = start(false).await;
    let (status, body) = sandbox
        .post("/v1/payments", &json!({"reference": "x"}))
        .await;
    assert_eq!(status, 422);
    assert_eq!(body["error"]["code"], "invalid_request");
    let mut zero = payment("card_1");
    zero["amount_minor"] = json!(0);
    let (status, body) = sandbox.post("/v1/payments", &zero).await;
    assert_eq!(
        (status, body["error"]["message"].as_str()),
        (422, Some("amount_minor must be a positive integer"))
    );
    let (status, _) = sandbox.page(reqwest::Method::GET, "/3ds/pay_nope").await;
    assert_eq!(status, 404);
    let (status, _) = sandbox.page(reqwest::Method::GET, "/healthz").await;
    assert_eq!(status, 200);
}
