//! The sandbox over real HTTP, with a real HTTP server in the point service's place that
//! checks each webhook's signature the way the point service does and hands every signed
//! event to the test through a channel (a test waits on the event, never on a clock).

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on purpose

use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_web::{App, HttpRequest, HttpResponse, web};
use chrono::{DateTime, TimeZone, Utc};
use hmac::{Hmac, KeyInit, Mac};
use payment_sandbox::clock::Clock;
use payment_sandbox::config::Config;
use serde_json::{Value, json};
use server::{CommonConfig, Env};
use sha2::Sha256;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, error::TryRecvError};

const SECRET: &str = "sandbox-test-secret";
const REFERENCE: &str = "6f1c2a4e-0000-4000-8000-000000000001";
/// How long a webhook may take to arrive (the sandbox sends it in the background).
const EVENT_WAIT: Duration = Duration::from_secs(20);

/// How the sandbox under test is set up.
#[derive(Default)]
struct Setup {
    auto_capture: bool,
    page_size: Option<usize>,
    /// A manual clock standing here; the system clock without one.
    clock: Option<DateTime<Utc>>,
    /// Webhooks go to a port nobody listens on.
    unreachable_point_service: bool,
}

struct Harness {
    base: String,
    http: reqwest::Client,
    events: tokio::sync::Mutex<UnboundedReceiver<Value>>,
    /// The status the fake point service answers webhooks with.
    answer: Arc<Mutex<u16>>,
    clock: Clock,
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
    if (Utc::now().timestamp() - t.parse::<i64>().unwrap_or(0)).abs() > 300 {
        return false;
    }
    let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(SECRET.as_bytes()).unwrap();
    mac.update(t.as_bytes());
    mac.update(b".");
    mac.update(body);
    mac.verify_slice(&hex::decode(v1).unwrap_or_default())
        .is_ok()
}

/// The fake point service: every signed event goes to `sink`, answered with `answer`.
fn point_service(sink: UnboundedSender<Value>, answer: Arc<Mutex<u16>>) -> String {
    server::spawn_local(move || {
        let (sink, answer) = (sink.clone(), answer.clone());
        App::new().route(
            "/webhooks/v1/payments",
            web::post().to(move |req: HttpRequest, body: web::Bytes| {
                let (sink, answer) = (sink.clone(), answer.clone());
                async move {
                    if !verified(&req, &body) {
                        return HttpResponse::Unauthorized().finish();
                    }
                    let code = *answer.lock().unwrap();
                    sink.send(serde_json::from_slice(&body).unwrap()).unwrap();
                    HttpResponse::build(actix_web::http::StatusCode::from_u16(code).unwrap())
                        .json(json!({"received": true}))
                }
            }),
        )
    })
    .unwrap()
}

async fn start(auto_capture: bool) -> Harness {
    start_with(Setup {
        auto_capture,
        ..Setup::default()
    })
    .await
}

async fn start_with(setup: Setup) -> Harness {
    let (sink, events) = tokio::sync::mpsc::unbounded_channel();
    let answer = Arc::new(Mutex::new(200u16));
    let point_service = if setup.unreachable_point_service {
        let closed = TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", closed.local_addr().unwrap())
    } else {
        point_service(sink, answer.clone())
    };

    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let mut vars = vec![
        ("PAYMENT_WEBHOOK_SECRET", SECRET.to_owned()),
        (
            "POINT_SERVICE_WEBHOOK_URL",
            format!("{point_service}/webhooks/v1/payments"),
        ),
        ("SANDBOX_AUTO_CAPTURE", setup.auto_capture.to_string()),
        ("SANDBOX_PUBLIC_URL", base.clone()),
        ("HTTP_WORKERS", "1".to_owned()),
    ];
    if let Some(size) = setup.page_size {
        vars.push(("SANDBOX_SETTLEMENT_PAGE_SIZE", size.to_string()));
    }
    let mut env = Env::from_vars(vars);
    let common = CommonConfig::from_env(&mut env, "payment-sandbox", 0);
    let config = Config::from_env(&mut env, common);
    let mut config = env.finish(config).unwrap();
    if let Some(at) = setup.clock {
        config.clock = Clock::manual(at);
    }
    let clock = config.clock.clone();
    tokio::spawn(payment_sandbox::build(config, listener).unwrap());
    Harness {
        base,
        http: reqwest::Client::new(),
        events: tokio::sync::Mutex::new(events),
        answer,
        clock,
    }
}

fn payment_for(reference: &str, card_id: &str) -> Value {
    json!({"reference": reference, "amount_minor": 1500, "currency": "SAR", "customer_id": 1001,
           "source": {"type": "card", "card_id": card_id, "cvv": "123"}})
}

fn payment(card_id: &str) -> Value {
    payment_for(REFERENCE, card_id)
}

fn session_for(reference: &str) -> Value {
    json!({"reference": reference, "amount_minor": 300, "currency": "SAR",
           "customer_id": 1001, "remember_me": true})
}

fn keys(value: &Value) -> Vec<&str> {
    value
        .as_object()
        .unwrap_or_else(|| panic!("not an object: {value}"))
        .keys()
        .map(String::as_str)
        .collect()
}

fn at(text: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(text).unwrap().to_utc()
}

/// `{"error": {"code": code, "message": …}}` and nothing else.
fn assert_error(body: &Value, code: &str) {
    assert_eq!(keys(body), ["error"], "{body}");
    assert_eq!(keys(&body["error"]), ["code", "message"], "{body}");
    assert_eq!(body["error"]["code"], code, "{body}");
    assert!(
        !body["error"]["message"].as_str().unwrap().is_empty(),
        "{body}"
    );
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

    async fn get(&self, path: &str) -> (u16, Value) {
        let response = self
            .http
            .get(format!("{}{path}", self.base))
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

    async fn press(&self, id: &str, button: &str) -> (u16, String) {
        self.page(reqwest::Method::POST, &format!("/3ds/{id}/{button}"))
            .await
    }

    /// A card payment that the sandbox accepted; its id.
    async fn pay(&self, card_id: &str) -> String {
        self.pay_for(REFERENCE, card_id).await
    }

    async fn pay_for(&self, reference: &str, card_id: &str) -> String {
        let (status, body) = self
            .post("/v1/payments", &payment_for(reference, card_id))
            .await;
        assert_eq!(status, 200, "{body}");
        body["id"].as_str().unwrap().to_owned()
    }

    /// The payment as `GET /v1/payments/{id}` answers it.
    async fn read_back(&self, id: &str) -> Value {
        let (status, body) = self.get(&format!("/v1/payments/{id}")).await;
        assert_eq!(status, 200, "{body}");
        body
    }

    async fn status_of(&self, id: &str) -> String {
        self.read_back(id).await["status"]
            .as_str()
            .unwrap()
            .to_owned()
    }

    /// The next webhook the fake point service received.
    async fn next_event(&self) -> Value {
        tokio::time::timeout(EVENT_WAIT, self.events.lock().await.recv())
            .await
            .expect("no webhook arrived")
            .expect("the fake point service stopped")
    }

    /// Every webhook received until the one naming `payment_id` (included).
    async fn events_until(&self, payment_id: &str) -> Vec<Value> {
        let mut events = Vec::new();
        loop {
            let event = self.next_event().await;
            let done = event["data"]["payment_id"] == payment_id;
            events.push(event);
            if done {
                return events;
            }
        }
    }

    /// No webhook was received that the test has not read yet.
    async fn no_unread_event(&self) {
        assert_eq!(
            self.events.lock().await.try_recv().err(),
            Some(TryRecvError::Empty)
        );
    }

    /// Every page of the settlement of `day`, following `next`.
    async fn settlement_pages(&self, day: &str) -> Vec<Value> {
        let mut pages = Vec::new();
        let mut path = format!("/v1/settlements/{day}");
        loop {
            let (status, page) = self.get(&path).await;
            assert_eq!(status, 200, "{page}");
            assert_eq!(keys(&page), ["data", "next"], "{page}");
            let next = page["next"].clone();
            pages.push(page);
            match next.as_str() {
                Some(cursor) => path = format!("/v1/settlements/{day}?cursor={cursor}"),
                None => {
                    assert!(next.is_null());
                    return pages;
                }
            }
            assert!(pages.len() < 100, "the pages never end");
        }
    }
}

fn names(events: &[Value], payment_id: &str) -> bool {
    events.iter().any(|e| e["data"]["payment_id"] == payment_id)
}

#[tokio::test]
async fn approving_on_the_3ds_page_sends_a_signed_capture() {
    let sandbox = start(false).await;
    let (status, body) = sandbox
        .post("/v1/payments", &payment("card_visa_4242"))
        .await;
    assert_eq!(status, 200);
    assert_eq!(keys(&body), ["id", "status", "redirect_url"]);
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
    sandbox.no_unread_event().await;
    assert_eq!(sandbox.status_of(&id).await, "pending");

    let (status, page) = sandbox.press(&id, "approve").await;
    assert_eq!(status, 200, "{page}");
    assert_eq!(
        sandbox.next_event().await,
        json!({"id": format!("evt_{id}_payment_captured"), "type": "payment_captured",
               "data": {"reference": REFERENCE, "payment_id": id,
                        "provider": "sandbox", "amount_minor": 1500, "currency": "SAR"}})
    );
    assert_eq!(sandbox.status_of(&id).await, "captured");

    let (status, _) = sandbox.press(&id, "decline").await;
    assert_eq!(status, 409, "a settled payment cannot be settled again");
    let (status, _) = sandbox.press(&id, "approve").await;
    assert_eq!(status, 409, "its webhook was taken: nothing to send again");
    // A button answers after its delivery: nothing more was sent.
    sandbox.no_unread_event().await;
    assert_eq!(sandbox.status_of(&id).await, "captured");
}

#[tokio::test]
async fn the_decline_button_sends_a_decline() {
    let sandbox = start(false).await;
    let id = sandbox.pay("card_1").await;
    let (status, _) = sandbox.press(&id, "decline").await;
    assert_eq!(status, 200);
    assert_eq!(sandbox.next_event().await["type"], "payment_declined");
    assert_eq!(sandbox.status_of(&id).await, "declined");
}

#[tokio::test]
async fn card_ids_decline_or_fail() {
    let sandbox = start(false).await;
    let reference = "card-ids";
    let (status, body) = sandbox
        .post(
            "/v1/payments",
            &payment_for(reference, "decline-insufficient"),
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(
        body,
        json!({"id": body["id"], "status": "declined", "redirect_url": null})
    );
    let declined = body["id"].as_str().unwrap().to_owned();
    assert_eq!(
        sandbox.status_of(&declined).await,
        "declined",
        "declined at once"
    );
    let event = sandbox.next_event().await;
    assert_eq!(event["type"], "payment_declined");
    assert_eq!(event["data"]["payment_id"], declined);

    let (status, body) = sandbox
        .post("/v1/payments", &payment_for(reference, "fail4xx-card"))
        .await;
    assert_eq!(status, 402);
    assert_error(&body, "card_declined");
    let (status, body) = sandbox
        .post("/v1/payments", &payment_for(reference, "fail5xx"))
        .await;
    assert_eq!(status, 500);
    assert_error(&body, "gateway_error");

    // A decline made after the failures: its webhook is the next one, so they sent none.
    let after = sandbox.pay_for(reference, "decline-after").await;
    let events = sandbox.events_until(&after).await;
    assert_eq!(events.len(), 1, "failures send no webhook: {events:?}");
    let (_, listed) = sandbox
        .get(&format!("/v1/payments?reference={reference}"))
        .await;
    let ids: Vec<&str> = listed["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        [declined.as_str(), after.as_str()],
        "failures make nothing"
    );
}

#[tokio::test]
async fn auto_capture_sends_the_capture_at_once() {
    let sandbox = start(true).await;
    let (status, body) = sandbox.post("/v1/payments", &payment("card_1")).await;
    assert_eq!(status, 200);
    assert_eq!(body["status"], "pending");
    let id = body["id"].as_str().unwrap();
    assert_eq!(
        sandbox.status_of(id).await,
        "captured",
        "captured before the webhook"
    );
    let event = sandbox.next_event().await;
    assert_eq!(event["type"], "payment_captured");
    assert_eq!(event["data"]["payment_id"], id);

    let (status, body) = sandbox
        .post("/v1/payment-sessions", &session_for("ref-2"))
        .await;
    assert_eq!(status, 200);
    assert_eq!(
        keys(&body),
        [
            "id",
            "session_token",
            "status",
            "remember_me",
            "redirect_url"
        ]
    );
    assert!(body["session_token"].as_str().unwrap().starts_with("tok_"));
    let session = body["id"].as_str().unwrap();
    assert!(session.starts_with("ses_"), "{session}");
    let event = sandbox.next_event().await;
    assert_eq!(
        (event["type"].as_str(), event["data"]["reference"].as_str()),
        (Some("payment_captured"), Some("ref-2"))
    );
    // The capture names the session, and the session reads back by that id on both routes.
    assert_eq!(event["data"]["payment_id"], session);
    assert_eq!(sandbox.status_of(session).await, "captured");
    let (status, by_session_route) = sandbox
        .get(&format!("/v1/payment-sessions/{session}"))
        .await;
    assert_eq!(status, 200);
    assert_eq!(by_session_route, sandbox.read_back(session).await);
}

#[tokio::test]
async fn a_refused_webhook_leaves_the_payment_captured_and_the_button_sends_it_again() {
    let sandbox = start(false).await;
    *sandbox.answer.lock().unwrap() = 503;
    let id = sandbox.pay("card_1").await;
    let (status, page) = sandbox.press(&id, "approve").await;
    assert_eq!(status, 502);
    assert!(page.contains("answered 503"), "{page}");
    let refused = sandbox.next_event().await;
    assert_eq!(
        sandbox.status_of(&id).await,
        "captured",
        "the gateway took the money whatever the point service said"
    );
    let (_, page) = sandbox
        .page(reqwest::Method::GET, &format!("/3ds/{id}"))
        .await;
    assert!(
        page.contains(&format!("action=\"/3ds/{id}/approve\"")),
        "the page offers to send it again: {page}"
    );
    let (status, _) = sandbox.press(&id, "decline").await;
    assert_eq!(status, 409, "a captured payment is not declined");
    sandbox.no_unread_event().await;

    *sandbox.answer.lock().unwrap() = 200;
    let (status, _) = sandbox.press(&id, "approve").await;
    assert_eq!(status, 200);
    let again = sandbox.next_event().await;
    assert_eq!(refused["id"], again["id"], "a retry is the same event");
    assert_eq!(sandbox.status_of(&id).await, "captured");
    let (status, _) = sandbox.press(&id, "approve").await;
    assert_eq!(status, 409, "taken: nothing to send again");
}

#[tokio::test]
async fn a_webhook_that_cannot_be_delivered_leaves_the_payment_captured() {
    // Refused for good (a 4xx is not retried), in the background.
    let sandbox = start(true).await;
    *sandbox.answer.lock().unwrap() = 400;
    let id = sandbox.pay("card_refused").await;
    let event = sandbox.next_event().await;
    assert_eq!(event["data"]["payment_id"], id);
    assert_eq!(sandbox.status_of(&id).await, "captured");

    // Unreachable, from the 3-D Secure button.
    let sandbox = start_with(Setup {
        unreachable_point_service: true,
        ..Setup::default()
    })
    .await;
    let id = sandbox.pay("card_unreachable").await;
    let (status, page) = sandbox.press(&id, "approve").await;
    assert_eq!(status, 502, "{page}");
    assert!(page.contains("could not be reached"), "{page}");
    let payment = sandbox.read_back(&id).await;
    assert_eq!(payment["status"], "captured");
    let today = at(payment["updated_at"].as_str().unwrap())
        .date_naive()
        .to_string();
    let pages = sandbox.settlement_pages(&today).await;
    assert!(
        pages[0]["data"]
            .as_array()
            .unwrap()
            .iter()
            .any(|entry| entry["id"] == id),
        "the settlement lists it: {pages:?}"
    );
}

#[tokio::test]
async fn a_payment_reads_back_in_the_documented_shape() {
    let made = Utc.with_ymd_and_hms(2026, 3, 1, 9, 30, 0).unwrap();
    let sandbox = start_with(Setup {
        clock: Some(made),
        ..Setup::default()
    })
    .await;
    let id = sandbox.pay("card_1").await;
    let payment = sandbox.read_back(&id).await;
    assert_eq!(
        keys(&payment),
        [
            "id",
            "reference",
            "status",
            "amount_minor",
            "currency",
            "updated_at"
        ]
    );
    assert_eq!(
        payment,
        json!({"id": id, "reference": REFERENCE, "status": "pending", "amount_minor": 1500,
               "currency": "SAR", "updated_at": payment["updated_at"]})
    );
    assert_eq!(at(payment["updated_at"].as_str().unwrap()), made);

    let captured = made + chrono::Duration::minutes(3);
    sandbox.clock.set(captured);
    let (status, _) = sandbox.press(&id, "approve").await;
    assert_eq!(status, 200);
    let payment = sandbox.read_back(&id).await;
    assert_eq!(payment["status"], "captured");
    assert_eq!(at(payment["updated_at"].as_str().unwrap()), captured);

    let (status, body) = sandbox.get("/v1/payments/pay_nope").await;
    assert_eq!(status, 404);
    assert_error(&body, "not_found");
    let (status, body) = sandbox.get("/v1/payment-sessions/ses_nope").await;
    assert_eq!(status, 404);
    assert_error(&body, "not_found");
}

#[tokio::test]
async fn payments_and_sessions_are_listed_by_reference_oldest_first() {
    let sandbox = start(false).await;
    let reference = "order-listed";
    let first = sandbox.pay_for(reference, "card_1").await;
    let (_, session) = sandbox
        .post("/v1/payment-sessions", &session_for(reference))
        .await;
    let session = session["id"].as_str().unwrap().to_owned();
    let other = sandbox.pay_for("order-other", "card_1").await;
    let declined = sandbox.pay_for(reference, "decline-1").await;
    sandbox.press(&first, "approve").await;

    let (status, listed) = sandbox
        .get(&format!("/v1/payments?reference={reference}"))
        .await;
    assert_eq!(status, 200);
    assert_eq!(keys(&listed), ["data"]);
    let data = listed["data"].as_array().unwrap();
    let ids: Vec<&str> = data.iter().map(|p| p["id"].as_str().unwrap()).collect();
    assert_eq!(ids, [&first, &session, &declined]);
    let statuses: Vec<&str> = data.iter().map(|p| p["status"].as_str().unwrap()).collect();
    assert_eq!(statuses, ["captured", "pending", "declined"]);
    for (listed, id) in data.iter().zip(&ids) {
        assert_eq!(listed, &sandbox.read_back(id).await, "the read-back shape");
    }

    let (_, listed) = sandbox.get("/v1/payments?reference=order-other").await;
    assert_eq!(listed["data"].as_array().unwrap().len(), 1);
    assert_eq!(listed["data"][0]["id"], other);
    let (status, listed) = sandbox.get("/v1/payments?reference=order-none").await;
    assert_eq!((status, listed), (200, json!({"data": []})));
    let (status, body) = sandbox.get("/v1/payments").await;
    assert_eq!(status, 422);
    assert_error(&body, "invalid_request");
}

#[tokio::test]
async fn a_days_settlement_comes_in_pages_with_each_capture_once() {
    let day = |d, h, m, s| Utc.with_ymd_and_hms(2026, 3, d, h, m, s).unwrap();
    let sandbox = start_with(Setup {
        page_size: Some(2),
        clock: Some(day(1, 0, 0, 0) - chrono::Duration::hours(1)),
        ..Setup::default()
    })
    .await;
    let capture_at = async |id: &str, when: DateTime<Utc>| {
        sandbox.clock.set(when);
        let (status, page) = sandbox.press(id, "approve").await;
        assert_eq!(status, 200, "{page}");
    };
    // The day before and the day after, on either side of midnight.
    let before = sandbox.pay("card_before").await;
    capture_at(&before, day(1, 0, 0, 0) - chrono::Duration::seconds(1)).await;
    sandbox.clock.set(day(1, 0, 0, 0));
    let mut ids = Vec::new();
    for n in 0..6 {
        ids.push(sandbox.pay(&format!("card_{n}")).await);
    }
    let (_, session) = sandbox
        .post("/v1/payment-sessions", &session_for("order-session"))
        .await;
    let session = session["id"].as_str().unwrap().to_owned();
    let pending = sandbox.pay("card_pending").await;
    let declined = sandbox.pay("card_declined").await;
    sandbox.press(&declined, "decline").await;
    let made_today_captured_tomorrow = sandbox.pay("card_tomorrow").await;

    // Two captures in the same instant: their ids order them.
    capture_at(&ids[0], day(1, 0, 0, 0)).await;
    capture_at(&ids[3], day(1, 8, 0, 0)).await;
    capture_at(&ids[1], day(1, 8, 0, 0)).await;
    capture_at(&session, day(1, 9, 15, 0)).await;
    capture_at(&ids[2], day(1, 12, 0, 0)).await;
    capture_at(&ids[5], day(1, 23, 59, 59)).await;
    capture_at(&made_today_captured_tomorrow, day(2, 0, 0, 0)).await;
    // ids[4] stays pending.

    let mut same_instant = [ids[3].clone(), ids[1].clone()];
    same_instant.sort();
    let expected = [
        (ids[0].clone(), day(1, 0, 0, 0)),
        (same_instant[0].clone(), day(1, 8, 0, 0)),
        (same_instant[1].clone(), day(1, 8, 0, 0)),
        (session.clone(), day(1, 9, 15, 0)),
        (ids[2].clone(), day(1, 12, 0, 0)),
        (ids[5].clone(), day(1, 23, 59, 59)),
    ];

    let pages = sandbox.settlement_pages("2026-03-01").await;
    assert_eq!(pages.len(), 3, "6 captures in pages of 2: {pages:?}");
    for page in &pages[..2] {
        assert!(page["next"].is_string(), "{page}");
    }
    let mut listed = Vec::new();
    for page in &pages {
        let data = page["data"].as_array().unwrap();
        assert!(data.len() <= 2, "{page}");
        for entry in data {
            assert_eq!(
                keys(entry),
                ["id", "reference", "amount_minor", "currency", "captured_at"]
            );
            listed.push((
                entry["id"].as_str().unwrap().to_owned(),
                at(entry["captured_at"].as_str().unwrap()),
            ));
        }
    }
    assert_eq!(listed, expected, "each capture once, in order");
    let first = &pages[0]["data"][0];
    assert_eq!(
        first,
        &json!({"id": ids[0], "reference": REFERENCE, "amount_minor": 1500, "currency": "SAR",
                "captured_at": first["captured_at"]})
    );
    for absent in [
        &before,
        &pending,
        &declined,
        &ids[4],
        &made_today_captured_tomorrow,
    ] {
        assert!(!listed.iter().any(|(id, _)| id == absent), "{absent}");
    }

    let listed_on = async |date: &str| -> Vec<String> {
        let pages = sandbox.settlement_pages(date).await;
        pages
            .iter()
            .flat_map(|p| p["data"].as_array().unwrap().clone())
            .map(|e| e["id"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(listed_on("2026-02-28").await, [before.as_str()]);
    assert_eq!(
        listed_on("2026-03-02").await,
        [made_today_captured_tomorrow.as_str()]
    );
    let (status, empty) = sandbox.get("/v1/settlements/2026-03-03").await;
    assert_eq!((status, empty), (200, json!({"data": [], "next": null})));

    // Exactly a page: no next page to ask for.
    let (_, page) = sandbox
        .get(&format!(
            "/v1/settlements/2026-03-01?cursor={}",
            pages[1]["next"].as_str().unwrap()
        ))
        .await;
    assert_eq!(page, pages[2]);
}

#[tokio::test]
async fn a_bad_settlement_date_or_cursor_is_422() {
    let day = Utc.with_ymd_and_hms(2026, 3, 1, 10, 0, 0).unwrap();
    let sandbox = start_with(Setup {
        page_size: Some(1),
        clock: Some(day),
        ..Setup::default()
    })
    .await;
    for card in ["card_1", "card_2"] {
        let id = sandbox.pay(card).await;
        sandbox.press(&id, "approve").await;
    }
    let (_, first) = sandbox.get("/v1/settlements/2026-03-01").await;
    let cursor = first["next"].as_str().unwrap().to_owned();

    for date in [
        "2026-3-1",
        "2026-02-30",
        "20260301",
        "yesterday",
        "2026-03-01x",
    ] {
        let (status, body) = sandbox.get(&format!("/v1/settlements/{date}")).await;
        assert_eq!(status, 422, "{date}: {body}");
        assert_error(&body, "invalid_date");
    }
    for (date, cursor) in [
        ("2026-03-01", "nope"),
        ("2026-03-01", "00"),
        ("2026-03-01", ""),
        ("2026-03-02", cursor.as_str()),
    ] {
        let (status, body) = sandbox
            .get(&format!("/v1/settlements/{date}?cursor={cursor}"))
            .await;
        assert_eq!(status, 422, "{date} {cursor:?}: {body}");
        assert_error(&body, "invalid_cursor");
    }
}

#[tokio::test]
async fn a_silent_card_is_captured_and_its_webhook_never_sent() {
    let sandbox = start(true).await;
    let (status, body) = sandbox.post("/v1/payments", &payment("silent-card")).await;
    assert_eq!(status, 200);
    let silent = body["id"].as_str().unwrap().to_owned();
    assert_eq!(
        body,
        json!({"id": silent, "status": "pending",
               "redirect_url": format!("{}/3ds/{silent}", sandbox.base)}),
        "answered like any 3-D Secure payment"
    );
    assert_eq!(sandbox.status_of(&silent).await, "captured");
    // Its page says so, and its button sends nothing.
    let (_, page) = sandbox
        .page(reqwest::Method::GET, &format!("/3ds/{silent}"))
        .await;
    assert!(page.contains("approved"), "{page}");
    let (status, _) = sandbox.press(&silent, "approve").await;
    assert_eq!(status, 200);

    // A normal payment made after it: its capture arrives, and nothing named the silent one.
    let normal = sandbox.pay("card_1").await;
    let events = sandbox.events_until(&normal).await;
    assert!(!names(&events, &silent), "{events:?}");
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(sandbox.status_of(&silent).await, "captured");
}

#[tokio::test]
async fn a_lost_answer_is_502_and_the_payment_is_found_by_reference() {
    let sandbox = start(true).await;
    let reference = "order-lost";
    let (status, body) = sandbox
        .post("/v1/payments", &payment_for(reference, "lost-answer"))
        .await;
    assert_eq!(status, 502);
    assert_error(&body, "answer_lost");

    let (status, listed) = sandbox
        .get(&format!("/v1/payments?reference={reference}"))
        .await;
    assert_eq!(status, 200);
    let data = listed["data"].as_array().unwrap();
    assert_eq!(data.len(), 1, "{listed}");
    assert_eq!(data[0]["status"], "captured");
    assert_eq!(data[0]["amount_minor"], 1500);
    let lost = data[0]["id"].as_str().unwrap().to_owned();
    assert_eq!(sandbox.status_of(&lost).await, "captured");

    let normal = sandbox.pay("card_1").await;
    let events = sandbox.events_until(&normal).await;
    assert!(!names(&events, &lost), "no webhook for it: {events:?}");
}

impl Harness {
    /// The payments of `reference` (`GET /v1/payments?reference=`): a look that tells the
    /// late payments held for it.
    async fn listed(&self, reference: &str) -> Vec<Value> {
        let (status, listed) = self
            .get(&format!("/v1/payments?reference={reference}"))
            .await;
        assert_eq!(status, 200, "{listed}");
        listed["data"].as_array().unwrap().clone()
    }

    /// The one payment of `reference` once it has been made (polled: a late payment is
    /// made in the background after a look).
    async fn made_for(&self, reference: &str) -> Value {
        let deadline = std::time::Instant::now() + EVENT_WAIT;
        loop {
            let listed = self.listed(reference).await;
            if let [made] = listed.as_slice() {
                return made.clone();
            }
            assert!(listed.is_empty(), "{listed:?}");
            assert!(
                std::time::Instant::now() < deadline,
                "the late payment of {reference} was never made"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Whether `id` is in the settlement of the day of `at`.
    async fn settled(&self, id: &str, at: DateTime<Utc>) -> bool {
        self.settlement_pages(&at.date_naive().to_string())
            .await
            .iter()
            .flat_map(|p| p["data"].as_array().unwrap().clone())
            .any(|entry| entry["id"] == id)
    }
}

#[tokio::test]
async fn a_late_card_is_made_after_its_hold_and_the_first_look_even_when_the_caller_hung_up() {
    let sandbox = start(true).await;
    let reference = "order-late-hung-up";
    // A caller whose wait (0.3 s) runs out long before the card's hold (2 s): it hangs up,
    // then looks for its payment by reference and finds nothing.
    let impatient = reqwest::Client::builder()
        .timeout(Duration::from_millis(300))
        .build()
        .unwrap();
    let sent = Utc::now();
    let gave_up = impatient
        .post(format!("{}/v1/payments", sandbox.base))
        .json(&payment_for(reference, "latelost2-card"))
        .send()
        .await
        .expect_err("held past the caller's wait");
    assert!(gave_up.is_timeout(), "{gave_up}");
    assert_eq!(sandbox.listed(reference).await, Vec::<Value>::new());

    // Looked at during the hold: made, captured, as the hold ends.
    let made = sandbox.made_for(reference).await;
    assert_eq!(made["status"], "captured", "{made}");
    let id = made["id"].as_str().unwrap().to_owned();
    assert_eq!(sandbox.read_back(&id).await, made);
    let committed = at(made["updated_at"].as_str().unwrap());
    assert!(
        committed - sent >= chrono::Duration::milliseconds(1_900),
        "made {} ms after the call, within its 2 s hold",
        (committed - sent).num_milliseconds()
    );
    assert!(
        sandbox.settled(&id, committed).await,
        "the settlement lists it"
    );

    // No webhook for it: a payment made after it has the next one.
    let normal = sandbox.pay("card_1").await;
    let events = sandbox.events_until(&normal).await;
    assert!(!names(&events, &id), "no webhook for it: {events:?}");
    assert_eq!(events.len(), 1, "{events:?}");
}

#[tokio::test]
async fn a_late_decline_answers_502_after_its_hold_and_is_made_after_the_first_look() {
    let sandbox = start(true).await;
    let reference = "order-late-declined";
    let sent = std::time::Instant::now();
    let (status, body) = sandbox
        .post("/v1/payments", &payment_for(reference, "latedecline1-card"))
        .await;
    assert!(
        sent.elapsed() >= Duration::from_secs(1),
        "held for its hold"
    );
    assert_eq!(status, 502);
    assert_error(&body, "answer_lost");
    // Nobody looked during the hold: the first look finds nothing, and the payment is made
    // after it.
    assert_eq!(sandbox.listed(reference).await, Vec::<Value>::new());
    let made = sandbox.made_for(reference).await;
    assert_eq!(
        (made["status"].as_str(), made["amount_minor"].as_i64()),
        (Some("declined"), Some(1500)),
        "{made}"
    );
    let declined = made["id"].as_str().unwrap().to_owned();
    let when = at(made["updated_at"].as_str().unwrap());
    assert!(
        !sandbox.settled(&declined, when).await,
        "a decline is in no settlement"
    );
    let normal = sandbox.pay("card_1").await;
    let events = sandbox.events_until(&normal).await;
    assert!(!names(&events, &declined), "no webhook for it: {events:?}");

    for card in ["latelost", "latedecline-5", "latelost601"] {
        let (status, body) = sandbox
            .post("/v1/payments", &payment_for(reference, card))
            .await;
        assert_eq!(status, 422, "{card}: {body}");
        assert_error(&body, "invalid_request");
    }
}

#[tokio::test]
async fn bad_requests_get_422_and_unknown_paths_404_in_json() {
    let sandbox = start(false).await;
    let (status, body) = sandbox
        .post("/v1/payments", &json!({"reference": "x"}))
        .await;
    assert_eq!(status, 422);
    assert_error(&body, "invalid_request");
    let mut zero = payment("card_1");
    zero["amount_minor"] = json!(0);
    let (status, body) = sandbox.post("/v1/payments", &zero).await;
    assert_eq!(
        (status, body["error"]["message"].as_str()),
        (422, Some("amount_minor must be a positive integer"))
    );
    let (status, body) = sandbox
        .post("/v1/payment-sessions", &json!({"amount_minor": 1}))
        .await;
    assert_eq!(status, 422);
    assert_error(&body, "invalid_request");
    let (status, _) = sandbox.page(reqwest::Method::GET, "/3ds/pay_nope").await;
    assert_eq!(status, 404);
    let (status, _) = sandbox.press("pay_nope", "approve").await;
    assert_eq!(status, 404);
    let (status, body) = sandbox.get("/v1/nothing").await;
    assert_eq!(status, 404);
    assert_error(&body, "not_found");

    let response = sandbox
        .http
        .delete(format!("{}/v1/payments", sandbox.base))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 405);
    let allow = response.headers()["allow"].to_str().unwrap().to_owned();
    assert!(allow.contains("GET") && allow.contains("POST"), "{allow}");
    assert_error(&response.json().await.unwrap(), "method_not_allowed");

    let (status, body) = sandbox.get("/healthz").await;
    assert_eq!((status, body), (200, json!({"status": "ok"})));
    let (status, body) = sandbox.get("/readyz").await;
    assert_eq!((status, body), (200, json!({"status": "ok"})));
}

#[tokio::test]
async fn the_document_lists_every_route_and_the_docs_page_answers() {
    let sandbox = start(false).await;
    let response = sandbox
        .http
        .get(format!("{}/openapi.json", sandbox.base))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let doc: Value = serde_json::from_str(&response.text().await.unwrap()).unwrap();
    assert!(
        doc["openapi"].as_str().unwrap().starts_with("3.1"),
        "{}",
        doc["openapi"]
    );
    let every_route = [
        ("post", "/v1/payments"),
        ("get", "/v1/payments"),
        ("get", "/v1/payments/{id}"),
        ("post", "/v1/payment-sessions"),
        ("get", "/v1/payment-sessions/{id}"),
        ("get", "/v1/settlements/{date}"),
        ("get", "/3ds/{id}"),
        ("post", "/3ds/{id}/approve"),
        ("post", "/3ds/{id}/decline"),
        ("get", "/healthz"),
        ("get", "/readyz"),
        ("get", "/metrics"),
    ];
    let description = doc["info"]["description"].as_str().unwrap();
    for card in ["`lost…`", "`latelost<N>…`", "`latedecline<N>…`"] {
        assert!(description.contains(card), "{card}: {description}");
    }
    let documented = server::testing::openapi::documented(&doc);
    let expected = every_route
        .iter()
        .map(|(m, p)| ((*m).to_owned(), (*p).to_owned()))
        .collect();
    assert_eq!(documented, expected);
    // What actix serves is what the route list documents, path parameters declared.
    server::testing::openapi::the_document_is_the_route_list(
        &sandbox.http,
        &sandbox.base,
        payment_sandbox::routes::routes(),
    )
    .await;

    let schema = |method: &str, path: &str, status: &str| {
        server::testing::openapi::schema_ref(&doc["paths"][path][method]["responses"][status])
            .map(str::to_owned)
    };
    let answers = [
        ("post", "/v1/payments", "200", "PaymentStarted"),
        ("post", "/v1/payments", "502", "ErrorBody"),
        ("get", "/v1/payments", "200", "PaymentList"),
        ("get", "/v1/payments/{id}", "200", "PaymentView"),
        ("get", "/v1/payments/{id}", "404", "ErrorBody"),
        ("post", "/v1/payment-sessions", "200", "SessionStarted"),
        ("get", "/v1/settlements/{date}", "200", "SettlementPage"),
        ("get", "/v1/settlements/{date}", "422", "ErrorBody"),
    ];
    for (method, path, status, name) in answers {
        assert_eq!(
            schema(method, path, status),
            Some(format!("#/components/schemas/{name}")),
            "{method} {path} {status}"
        );
    }
    let schemas = &doc["components"]["schemas"];
    // The document's properties are sorted by name; the answers' order is checked above.
    let properties = |name: &str| {
        let mut names = keys(&schemas[name]["properties"]);
        names.sort_unstable();
        names.join(",")
    };
    assert_eq!(
        properties("PaymentView"),
        "amount_minor,currency,id,reference,status,updated_at"
    );
    assert_eq!(
        properties("SettlementEntry"),
        "amount_minor,captured_at,currency,id,reference"
    );
    assert_eq!(properties("SettlementPage"), "data,next");
    // Always present, `null` when there is none.
    for (name, field) in [
        ("SettlementPage", "next"),
        ("PaymentStarted", "redirect_url"),
    ] {
        assert!(
            schemas[name]["required"]
                .as_array()
                .unwrap()
                .contains(&json!(field)),
            "{name}.{field}"
        );
        assert_eq!(
            schemas[name]["properties"][field]["type"],
            json!(["string", "null"])
        );
    }
    let mut operation_ids: Vec<&str> = documented
        .iter()
        .map(|(method, path)| doc["paths"][path][method]["operationId"].as_str().unwrap())
        .collect();
    operation_ids.sort_unstable();
    let count = operation_ids.len();
    operation_ids.dedup();
    assert_eq!(operation_ids.len(), count, "operation ids are unique");
    for name in ["PaymentRequest", "SessionRequest", "Charge", "CardSource"] {
        assert!(schemas[name].is_object(), "{name} is missing");
    }
    assert_eq!(
        doc["paths"]["/v1/payments"]["post"]["requestBody"]["content"]["application/json"]["schema"]
            ["$ref"],
        "#/components/schemas/PaymentRequest"
    );
    let query: Vec<&str> = doc["paths"]["/v1/settlements/{date}"]["get"]["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(query, ["date", "cursor"]);

    let response = sandbox
        .http
        .get(format!("{}/docs", sandbox.base))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert!(response.url().path().starts_with("/docs/"));
    let content_type = response.headers()["content-type"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(content_type.starts_with("text/html"), "{content_type}");
    let page = response.text().await.unwrap();
    assert!(page.contains("swagger-ui"), "{page}");
}
