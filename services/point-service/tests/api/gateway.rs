//! A payment service with a memory, for the sync's tests: a real HTTP server that makes
//! payments, reads them back by id and by reference, and lets the test change a payment's
//! status, take the service down, hold its reads, or make it answer for another order.
//!
//! A card id chooses what the payment does: `silent…` is captured at once and no webhook is
//! ever sent; `lost…` is captured at once and the answer is lost (502); `usd…` is captured
//! in dollars and `short…` for one halala less; anything else stays pending (the client
//! never finished its 3-D Secure step) until the test settles it. A payment id
//! `backlog-<reference>` reads back as captured for 15.00 SAR without being made first (a
//! backlog a test writes straight into the database).

use std::sync::{Arc, Mutex};
use std::time::Instant;

use actix_web::{App, HttpResponse, web};
use serde_json::{Value, json};

/// How the fake misbehaves when read back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Lie {
    #[default]
    None,
    /// Every payment read back names another order's reference.
    OtherReference,
    /// A payment read by id comes back as another payment.
    OtherPayment,
}

#[derive(Default)]
struct State {
    /// Oldest first.
    payments: Vec<Value>,
    /// When each read-back call arrived, and its path and query.
    reads: Vec<(Instant, String)>,
    /// Read-back calls answer 503.
    down: bool,
    lie: Lie,
    /// Read-back calls wait for a permit of this semaphore, when set.
    hold: Option<Arc<tokio::sync::Semaphore>>,
    /// Announced each time a read-back call is waiting on `hold`.
    held: Option<Arc<tokio::sync::Semaphore>>,
}

#[derive(Clone)]
pub struct Gateway {
    pub url: String,
    state: Arc<Mutex<State>>,
}

impl Gateway {
    pub fn spawn() -> Self {
        let state: Arc<Mutex<State>> = Arc::default();
        let shared = state.clone();
        let url = server::spawn_local(move || {
            let create = shared.clone();
            let by_id = shared.clone();
            let by_reference = shared.clone();
            App::new()
                .route(
                    "/v1/payments",
                    web::post().to(move |body: web::Json<Value>| {
                        let state = create.clone();
                        async move { Gateway::create(&state, &body) }
                    }),
                )
                .route(
                    "/v1/payment-sessions",
                    web::post().to(|| async {
                        HttpResponse::Ok().json(json!({"id": "ses_unused", "session_token": "tok"}))
                    }),
                )
                .route(
                    "/v1/payments/{id}",
                    web::get().to(move |id: web::Path<String>| {
                        let state = by_id.clone();
                        async move {
                            if let Some(refused) =
                                Gateway::read(&state, format!("/v1/payments/{id}")).await
                            {
                                return refused;
                            }
                            let state = state.lock().unwrap();
                            if let Some(reference) = id.strip_prefix("backlog-") {
                                return HttpResponse::Ok().json(
                                    json!({"id": *id, "reference": reference,
                                    "status": "captured", "amount_minor": 1500, "currency": "SAR",
                                    "updated_at": "2026-11-27T10:00:00Z"}),
                                );
                            }
                            match state.payments.iter().find(|p| p["id"] == id.as_str()) {
                                Some(p) => HttpResponse::Ok().json(lie(state.lie, p, true)),
                                None => {
                                    HttpResponse::NotFound().json(json!({"error": "not_found"}))
                                }
                            }
                        }
                    }),
                )
                .route(
                    "/v1/payments",
                    web::get().to(move |query: web::Query<Vec<(String, String)>>| {
                        let state = by_reference.clone();
                        async move {
                            let reference = query
                                .iter()
                                .find(|(k, _)| k == "reference")
                                .map(|(_, v)| v.clone())
                                .unwrap_or_default();
                            if let Some(refused) =
                                Gateway::read(&state, format!("/v1/payments?reference={reference}"))
                                    .await
                            {
                                return refused;
                            }
                            let state = state.lock().unwrap();
                            let data: Vec<Value> = state
                                .payments
                                .iter()
                                .filter(|p| p["reference"] == reference.as_str())
                                .map(|p| lie(state.lie, p, false))
                                .collect();
                            HttpResponse::Ok().json(json!({"data": data}))
                        }
                    }),
                )
        })
        .unwrap();
        Self { url, state }
    }

    fn create(state: &Mutex<State>, body: &Value) -> HttpResponse {
        let card = body["source"]["card_id"].as_str().unwrap_or_default();
        let mut state = state.lock().unwrap();
        let id = format!("pay_{}", state.payments.len() + 1);
        let amount = body["amount_minor"].as_i64().unwrap();
        let (status, amount, currency) = match card {
            c if c.starts_with("silent") || c.starts_with("lost") => ("captured", amount, "SAR"),
            c if c.starts_with("usd") => ("captured", amount, "USD"),
            c if c.starts_with("short") => ("captured", amount - 1, "SAR"),
            _ => ("pending", amount, "SAR"),
        };
        state.payments.push(
            json!({"id": id, "reference": body["reference"], "status": status,
            "amount_minor": amount, "currency": currency, "updated_at": "2026-11-27T10:00:00Z"}),
        );
        if card.starts_with("lost") {
            return HttpResponse::BadGateway().json(json!({"error": "answer_lost"}));
        }
        HttpResponse::Ok()
            .json(json!({"id": id, "status": "pending", "redirect_url": "http://fake/3ds"}))
    }

    /// Records a read; its refusal when the service is down. Waits while reads are held.
    async fn read(state: &Mutex<State>, what: String) -> Option<HttpResponse> {
        let (hold, held) = {
            let mut state = state.lock().unwrap();
            state.reads.push((Instant::now(), what));
            (state.hold.clone(), state.held.clone())
        };
        if let (Some(hold), Some(held)) = (hold, held) {
            held.add_permits(1);
            hold.acquire().await.unwrap().forget();
        }
        state
            .lock()
            .unwrap()
            .down
            .then(|| HttpResponse::ServiceUnavailable().json(json!({"error": "down"})))
    }

    /// The payment made for `reference` (the order's correlation_id), oldest first.
    pub fn payments_of(&self, reference: &str) -> Vec<Value> {
        let state = self.state.lock().unwrap();
        state
            .payments
            .iter()
            .filter(|p| p["reference"] == reference)
            .cloned()
            .collect()
    }

    /// The id of the only payment made for `reference`.
    pub fn payment_of(&self, reference: &str) -> String {
        let payments = self.payments_of(reference);
        assert_eq!(payments.len(), 1, "{payments:?}");
        payments[0]["id"].as_str().unwrap().to_owned()
    }

    pub fn set_status(&self, id: &str, status: &str) {
        let mut state = self.state.lock().unwrap();
        let payment = state.payments.iter_mut().find(|p| p["id"] == id).unwrap();
        payment["status"] = json!(status);
    }

    pub fn set_down(&self, down: bool) {
        self.state.lock().unwrap().down = down;
    }

    pub fn set_lie(&self, lie: Lie) {
        self.state.lock().unwrap().lie = lie;
    }

    /// Holds every read until `release`; `held` gets a permit as each read starts waiting.
    pub fn hold_reads(&self) -> (Arc<tokio::sync::Semaphore>, Arc<tokio::sync::Semaphore>) {
        let hold = Arc::new(tokio::sync::Semaphore::new(0));
        let held = Arc::new(tokio::sync::Semaphore::new(0));
        let mut state = self.state.lock().unwrap();
        state.hold = Some(hold.clone());
        state.held = Some(held.clone());
        (hold, held)
    }

    /// The read-back calls so far, with when each arrived.
    pub fn reads(&self) -> Vec<(Instant, String)> {
        self.state.lock().unwrap().reads.clone()
    }
}

fn lie(lie: Lie, payment: &Value, by_id: bool) -> Value {
    let mut payment = payment.clone();
    match lie {
        Lie::None => {}
        Lie::OtherReference => {
            payment["reference"] = json!("00000000-0000-4000-8000-00000000beef");
        }
        Lie::OtherPayment if by_id => {
            payment["id"] = json!("pay_someone_elses");
        }
        Lie::OtherPayment => {}
    }
    payment
}
