//! A payment service with a memory, for the sync's tests: a real HTTP server that makes
//! payments, reads them back by id and by reference, and lets the test change a payment's
//! status, take the service down, hold its reads, or make it answer for another order.
//!
//! A card id chooses what the payment does: `silent…` is captured at once and no webhook is
//! ever sent; `lost…` is captured at once and the answer is lost (502); `late-captured…` and
//! `late-declined…` lose the answer (502) too, but the payment is committed only *after*
//! the first read of its reference has answered without it (a gateway still working on it
//! when our wait ran out), then captured or declined; `void…` loses the answer and makes no
//! payment at all; `usd…` is captured in dollars and `short…` for one halala less; anything
//! else stays pending (the client never finished its 3-D Secure step) until the test
//! settles it. Sessions are answered, or, after [`Gateway::lose_sessions`], lost and
//! committed late (pending) like a `late…` card. A payment id `backlog-<reference>` reads
//! back as captured for 15.00 SAR without being made first (a backlog a test writes straight
//! into the database).

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
    /// Read by reference, a payment has another status than read by id (captured and
    /// declined swapped, pending read as captured).
    OtherStatusByReference,
    /// Read by reference, a payment is for a riyal more than read by id.
    OtherAmountByReference,
}

#[derive(Default)]
struct State {
    /// Oldest first.
    payments: Vec<Value>,
    /// Payments made by a `late…` pay call (or a lost session), committed after the first
    /// read of their reference.
    late: Vec<Value>,
    /// Session calls lose their answer and commit late.
    sessions_lost: bool,
    /// Reads by reference answer pages of this many payments, when set.
    page_size: Option<usize>,
    /// When each read-back call arrived, and its path and query.
    reads: Vec<(Instant, String)>,
    /// Read-back calls answer 503.
    down: bool,
    lie: Lie,
    /// Read-back calls wait for a permit of this semaphore, when set.
    hold: Option<Arc<tokio::sync::Semaphore>>,
    /// Announced each time a read-back call is waiting on `hold`.
    held: Option<Arc<tokio::sync::Semaphore>>,
    /// Read-back calls through the first address and through [`Gateway::another_door`].
    doors: [usize; 2],
}

#[derive(Clone)]
pub struct Gateway {
    pub url: String,
    state: Arc<Mutex<State>>,
}

impl Gateway {
    pub fn spawn() -> Self {
        let state: Arc<Mutex<State>> = Arc::default();
        let url = Self::serve(state.clone(), 0);
        Self { url, state }
    }

    /// A second address of the same payment service: the reads that come through it are
    /// counted apart ([`Gateway::reads_through`]), so a test can tell two callers apart.
    pub fn another_door(&self) -> String {
        Self::serve(self.state.clone(), 1)
    }

    fn serve(shared: Arc<Mutex<State>>, door: usize) -> String {
        server::spawn_local(move || {
            let create = shared.clone();
            let session = shared.clone();
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
                    web::post().to(move |body: web::Json<Value>| {
                        let state = session.clone();
                        async move { Gateway::session(&state, &body) }
                    }),
                )
                .route(
                    "/v1/payments/{id}",
                    web::get().to(move |id: web::Path<String>| {
                        let state = by_id.clone();
                        async move {
                            if let Some(refused) =
                                Gateway::read(&state, format!("/v1/payments/{id}"), door).await
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
                            let value = |key: &str| {
                                query.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone())
                            };
                            let reference = value("reference").unwrap_or_default();
                            let mut what = format!("/v1/payments?reference={reference}");
                            if let Some(cursor) = value("cursor") {
                                what.push_str(&format!("&cursor={cursor}"));
                            }
                            if let Some(refused) = Gateway::read(&state, what, door).await {
                                return refused;
                            }
                            let cursor = value("cursor").and_then(|c| c.parse().ok()).unwrap_or(0);
                            HttpResponse::Ok()
                                .json(Gateway::by_reference(&state, &reference, cursor))
                        }
                    }),
                )
        })
        .unwrap()
    }

    fn create(state: &Mutex<State>, body: &Value) -> HttpResponse {
        let card = body["source"]["card_id"].as_str().unwrap_or_default();
        let mut state = state.lock().unwrap();
        let id = format!("pay_{}", state.payments.len() + state.late.len() + 1);
        let amount = body["amount_minor"].as_i64().unwrap();
        let (status, amount, currency) = match card {
            c if c.starts_with("silent") || c.starts_with("lost") => ("captured", amount, "SAR"),
            c if c.starts_with("late-captured") => ("captured", amount, "SAR"),
            c if c.starts_with("late-declined") => ("declined", amount, "SAR"),
            c if c.starts_with("usd") => ("captured", amount, "USD"),
            c if c.starts_with("short") => ("captured", amount - 1, "SAR"),
            _ => ("pending", amount, "SAR"),
        };
        let payment = json!({"id": id, "reference": body["reference"], "status": status,
            "amount_minor": amount, "currency": currency, "updated_at": "2026-11-27T10:00:00Z"});
        if card.starts_with("void") {
            return lost_answer();
        }
        if card.starts_with("late") {
            state.late.push(payment);
            return lost_answer();
        }
        state.payments.push(payment);
        if card.starts_with("lost") {
            return lost_answer();
        }
        HttpResponse::Ok()
            .json(json!({"id": id, "status": "pending", "redirect_url": "http://fake/3ds"}))
    }

    fn session(state: &Mutex<State>, body: &Value) -> HttpResponse {
        let mut state = state.lock().unwrap();
        let id = format!("ses_{}", state.payments.len() + state.late.len() + 1);
        let session = json!({"id": id, "reference": body["reference"], "status": "pending",
            "amount_minor": body["amount_minor"], "currency": "SAR",
            "updated_at": "2026-11-27T10:00:00Z"});
        if state.sessions_lost {
            state.late.push(session);
            return lost_answer();
        }
        state.payments.push(session);
        HttpResponse::Ok().json(json!({"id": id, "session_token": "tok"}))
    }

    /// A read by reference: a page of its payments from `cursor` on (all of them unless
    /// paged), then what was made late for it is committed (it was not yet when this read
    /// was answered).
    fn by_reference(state: &Mutex<State>, reference: &str, cursor: usize) -> Value {
        let mut state = state.lock().unwrap();
        let all: Vec<Value> = state
            .payments
            .iter()
            .filter(|p| p["reference"] == reference)
            .map(|p| lie(state.lie, p, false))
            .collect();
        let size = state.page_size.unwrap_or(all.len().max(1));
        let end = (cursor + size).min(all.len());
        let next = (end < all.len()).then(|| end.to_string());
        let answer = json!({"data": all.get(cursor..end).unwrap_or_default(), "next": next});
        let (now, later): (Vec<Value>, Vec<Value>) = std::mem::take(&mut state.late)
            .into_iter()
            .partition(|p| p["reference"] == reference);
        state.late = later;
        state.payments.extend(now);
        answer
    }

    /// Records a read; its refusal when the service is down. Waits while reads are held.
    async fn read(state: &Mutex<State>, what: String, door: usize) -> Option<HttpResponse> {
        let (hold, held) = {
            let mut state = state.lock().unwrap();
            state.reads.push((Instant::now(), what));
            state.doors[door] += 1;
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

    /// Files payment `id` under another reference (a payment service that mixed up orders).
    pub fn set_reference(&self, id: &str, reference: &str) {
        let mut state = self.state.lock().unwrap();
        let payment = state.payments.iter_mut().find(|p| p["id"] == id).unwrap();
        payment["reference"] = json!(reference);
    }

    pub fn set_down(&self, down: bool) {
        self.state.lock().unwrap().down = down;
    }

    /// Session calls from now on lose their answer, their session committed late.
    pub fn lose_sessions(&self) {
        self.state.lock().unwrap().sessions_lost = true;
    }

    /// Reads by reference from now on answer `size` payments a page.
    pub fn set_page_size(&self, size: usize) {
        self.state.lock().unwrap().page_size = Some(size);
    }

    /// Payments made for `reference` and not committed yet.
    pub fn uncommitted(&self, reference: &str) -> usize {
        let state = self.state.lock().unwrap();
        state
            .late
            .iter()
            .filter(|p| p["reference"] == reference)
            .count()
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

    /// The read-back calls that came through door 0 (`url`) or 1 ([`Gateway::another_door`]).
    pub fn reads_through(&self, door: usize) -> usize {
        self.state.lock().unwrap().doors[door]
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
        Lie::OtherStatusByReference if !by_id => {
            let other = match payment["status"].as_str() {
                Some("declined") => "captured",
                Some("captured") => "declined",
                _ => "captured",
            };
            payment["status"] = json!(other);
        }
        Lie::OtherAmountByReference if !by_id => {
            payment["amount_minor"] = json!(payment["amount_minor"].as_i64().unwrap() + 100);
        }
        Lie::OtherPayment | Lie::OtherStatusByReference | Lie::OtherAmountByReference => {}
    }
    payment
}

/// The payment service's answer lost on the way back.
fn lost_answer() -> HttpResponse {
    HttpResponse::BadGateway().json(json!({"error": "answer_lost"}))
}
