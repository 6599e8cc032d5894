//! `spawn_app()`: the real app on port 0 with a seeded database of its own, a fake auth
//! service and a fake payment service, both real HTTP servers.

use std::collections::HashMap;
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_web::{App, HttpRequest, HttpResponse, web};
use db::testing::TestDatabase;
use point_service::config::{BatchSettings, Config, Flags, Limits, SyncSettings};
use serde_json::{Value, json};
use server::Secret;
pub use testkit::{answer, error_b, keys};

/// The order service's `Authorization` on the credits route for `body` as sent (its text):
/// made for that one request, as the order service makes it (development keys).
pub fn from_order(body: &str) -> String {
    testkit::identity::signer(service_identity::Service::Order).vouch(
        service_identity::Service::Point,
        None,
        "POST",
        paths::CREDITS,
        body.as_bytes(),
    )
}
pub const WEBHOOK_SECRET: &str = "test-webhook-secret-0123456789abcdef01";

/// Clients the fake auth service knows, with their tokens (`token-<id>`).
pub const SARA: i64 = 1001;
pub const OMAR: i64 = 1002;
pub const NOURA: i64 = 1003;
/// Has a token but no profile on the internal route.
pub const GHOST: i64 = 1098;

pub const OFFER: &str = "64b7f0c2a1b2c3d4e5f60718"; // 100 points for 120, 15.00 SAR
pub const OFFER_NO_POINTS_PRICE: &str = "64b7f0c2a1b2c3d4e5f6071a";
pub const OFFER_INACTIVE: &str = "64b7f0c2a1b2c3d4e5f6071b";
pub const OCCASION: &str = "64b7f0c2a1b2c3d4e5f60801";
pub const OCCASION_INACTIVE: &str = "64b7f0c2a1b2c3d4e5f60805";
pub const LEGACY_ORDER: &str = "6f1c1f9e-2d0b-4b43-9a52-5d2f0c7e8a11";

pub fn token(client: i64) -> String {
    format!("token-{client}")
}

pub fn fixture() -> Value {
    json!({
        "point_settings": {"expiry": "inactivity", "inactivity_days": 365},
        "point_transactions": [
            {"client_id": SARA, "kind": "earn", "points": "500.5", "created_at": "2026-01-01T10:00:00Z"},
            {"client_id": SARA, "kind": "earn", "points": "250", "created_at": "2026-03-31T22:30:00Z"},
            {"client_id": SARA, "kind": "spend", "points": "50.25", "created_at": "2026-04-02T10:00:00Z"}
        ],
        "point_offers": [
            {"id": OFFER, "point_amount": 100, "purchased_point_amount": 120, "amount": "15.00",
                "sequence": 2, "legacy_id": 3, "active": true, "deleted": false},
            {"id": "64b7f0c2a1b2c3d4e5f60719", "point_amount": 250, "purchased_point_amount": 300,
                "amount": "35.5", "sequence": 1, "legacy_id": 9, "active": true, "deleted": false},
            {"id": OFFER_NO_POINTS_PRICE, "point_amount": 500, "purchased_point_amount": null,
                "amount": "65.00", "sequence": null, "legacy_id": 1, "active": true, "deleted": false},
            {"id": OFFER_INACTIVE, "point_amount": 1000, "purchased_point_amount": 1150,
                "amount": "120.00", "sequence": 0, "legacy_id": 6, "active": false, "deleted": false},
            {"id": "64b7f0c2a1b2c3d4e5f6071c", "point_amount": 5, "purchased_point_amount": 6,
                "amount": "1.00", "sequence": 0, "legacy_id": 7, "active": true, "deleted": true},
            {"id": "64b7f0c2a1b2c3d4e5f6071d", "point_amount": 7, "purchased_point_amount": 8,
                "amount": "2.00", "sequence": null, "legacy_id": null, "active": true, "deleted": false}
        ],
        "point_occasions": [
            {"id": OCCASION, "occasion_en": " Birthday ", "occasion_ar": " عيد ميلاد ", "is_custom": 0, "active": true},
            {"id": "64b7f0c2a1b2c3d4e5f60802", "occasion_en": "Graduation", "occasion_ar": null,
                "is_custom": 1, "active": true},
            {"id": OCCASION_INACTIVE, "occasion_en": "Old", "occasion_ar": null, "is_custom": 0, "active": false}
        ],
        "points_faq": [
            {"question_en": "Q1", "answer_en": "A1", "question_ar": "س١", "answer_ar": "ج١"},
            {"question_en": "Q2", "answer_en": "A2", "question_ar": "س٢", "answer_ar": "ج٢"}
        ],
        "legacy_point_orders": [{"correlation_id": LEGACY_ORDER, "payer_id": SARA, "recipient_id": OMAR,
            "status": "paid", "payment_status": "AUTHORIZED", "point_amount": 100, "purchased_point_amount": 120,
            "money_amount": "15.00", "payment_type": "checkout", "order_type": "transfer"}]
    })
}

/// How the fake auth service answers `/api/v1/users`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum AuthMode {
    Normal,
    /// 200 without a numeric client id.
    NoClientId,
}

pub struct Options {
    pub flags: Flags,
    pub auth: Option<AuthMode>,
    /// Point the auth client at a port nobody listens on.
    pub auth_unreachable: bool,
    pub payment_timeout: Duration,
    /// Instead of the fake payment service.
    pub payment_url: Option<String>,
    /// `AUTH_CALLER_CACHE_SECONDS`; zero (every request asks) unless a test is about the cache.
    pub caller_cache_ttl: Duration,
    /// `UNPAID_ORDERS_PER_CLIENT_PER_DAY` and `PAYMENT_ATTEMPTS_PER_ORDER`.
    pub limits: Limits,
    /// The payment sync's pace: the binary's defaults (no order of a short test is ever
    /// old enough to sync) unless a test is about the sync.
    pub sync: SyncSettings,
    /// `OFFER_MAX_POINTS_PER_SAR`: unset (the seeded offers' rate) unless a test sets it.
    pub offer_max_points_per_sar: Option<bigdecimal::BigDecimal>,
    /// `POINT_ORDER_BATCH_*`: the binary's defaults unless a test is about the batches.
    pub batches: BatchSettings,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            flags: Flags {
                point_orders: true,
                card_payments: true,
            },
            auth: Some(AuthMode::Normal),
            auth_unreachable: false,
            payment_timeout: Duration::from_secs(2),
            payment_url: None,
            caller_cache_ttl: Duration::ZERO,
            limits: Limits::default(),
            sync: SyncSettings::default(),
            offer_max_points_per_sar: None,
            batches: BatchSettings::default(),
        }
    }
}

/// What the fake payment service was asked.
pub type Recorded = Arc<Mutex<Vec<(String, Value)>>>;

/// Holds the fake payment service's answer to a `gate-<x>` card: the test learns when the
/// payment was asked for (`asked`) and decides when it is answered (`release`), so it can
/// deliver a webhook while the pay route still waits, as a real payment service may.
pub struct Gate {
    asked: tokio::sync::Semaphore,
    release: tokio::sync::Semaphore,
}

impl Default for Gate {
    fn default() -> Self {
        Self {
            asked: tokio::sync::Semaphore::new(0),
            release: tokio::sync::Semaphore::new(0),
        }
    }
}

impl Gate {
    /// Waits until the fake payment service has been asked for a gated payment.
    pub async fn asked(&self) {
        self.asked.acquire().await.unwrap().forget();
    }

    /// Lets one gated answer go.
    pub fn release(&self) {
        self.release.add_permits(1);
    }
}

pub struct TestApp {
    pub base: String,
    pub client: reqwest::Client,
    pub database: TestDatabase,
    pub payments: Recorded,
    pub gate: Arc<Gate>,
}

pub async fn spawn_app() -> TestApp {
    spawn_app_with(Options::default()).await
}

pub async fn spawn_app_with(options: Options) -> TestApp {
    let database = testkit::seed::seeded_database(
        point_service::db::MIGRATIONS,
        point_service::seed::load,
        &fixture(),
    )
    .await;
    let auth_url = match (options.auth, options.auth_unreachable) {
        (_, true) => Some(format!("http://127.0.0.1:{}", unused_port())),
        (Some(mode), false) => Some(spawn_fake_auth(mode)),
        (None, false) => None,
    };
    let payments: Recorded = Arc::default();
    let gate: Arc<Gate> = Arc::default();
    let payment_url = options
        .payment_url
        .clone()
        .unwrap_or_else(|| spawn_fake_payments(payments.clone(), gate.clone()));
    let config = config(&database, &options, auth_url, payment_url);
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(point_service::startup::build(config, listener).unwrap());
    TestApp {
        base,
        client: reqwest::Client::new(),
        database,
        payments,
        gate,
    }
}

/// Another replica of `app`'s service: the same database, a fake auth service of its own,
/// and `options`' payment service (else a fake of its own). Answers its base URL.
pub async fn spawn_replica(app: &TestApp, options: Options) -> String {
    let auth_url = options.auth.map(spawn_fake_auth);
    let payment_url = options
        .payment_url
        .clone()
        .unwrap_or_else(|| spawn_fake_payments(Recorded::default(), Arc::default()));
    let config = config(&app.database, &options, auth_url, payment_url);
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(point_service::startup::build(config, listener).unwrap());
    base
}

/// The service's configuration for a test: its database, the options, the fakes' addresses.
fn config(
    database: &TestDatabase,
    options: &Options,
    auth_url: Option<String>,
    payment_url: String,
) -> Config {
    Config {
        common: testkit::config::common("point-service"),
        database: testkit::config::database(database.url(), 10),
        auth_service_url: auth_url,
        auth_timeout: Duration::from_secs(2),
        caller_cache_ttl: options.caller_cache_ttl,
        signer: testkit::identity::signer(service_identity::Service::Point),
        identity: testkit::identity::verifier(service_identity::Service::Point),
        payment_service_url: Some(payment_url),
        payment_timeout: options.payment_timeout,
        webhook_secret: Secret::new(WEBHOOK_SECRET),
        flags: options.flags,
        limits: options.limits,
        sync: options.sync,
        hostname: None,
        offer_max_points_per_sar: options.offer_max_points_per_sar.clone(),
        batches: options.batches,
        events: outbox::EventSettings::default(),
    }
}

pub fn unused_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Plays the auth service: `token-<id>` is client `<id>`; clients 1001 to 1003 have
/// profiles, 1098 has a token but no profile.
fn spawn_fake_auth(mode: AuthMode) -> String {
    let profiles: HashMap<i64, (&str, &str)> = HashMap::from([
        (SARA, ("Sara", "Ali")),
        (OMAR, ("Omar", "Alharbi")),
        (NOURA, ("Noura", "Q")),
    ]);
    server::spawn_local(move || {
        let profiles = profiles.clone();
        App::new()
            .route(
                "/api/v1/users",
                web::get().to(move |req: HttpRequest| async move {
                    let token = req
                        .headers()
                        .get("authorization")
                        .and_then(|v| v.to_str().ok())
                        .unwrap_or("");
                    let id = token
                        .strip_prefix("Bearer token-")
                        .and_then(|id| id.parse::<i64>().ok());
                    match (id, mode) {
                        (None, _) => HttpResponse::Unauthorized()
                            .json(json!({"status": 401, "message": "Unauthorization"})),
                        (Some(_), AuthMode::NoClientId) => HttpResponse::Ok()
                            .json(json!({"status": 200, "data": {"client_id": "abc"}})),
                        (Some(id), AuthMode::Normal) => HttpResponse::Ok()
                            .json(json!({"status": 200, "data": {"client_id": id}})),
                    }
                }),
            )
            .route(
                "/internal/v1/clients/{id}",
                web::get().to(move |req: HttpRequest, path: web::Path<i64>| {
                    let profiles = profiles.clone();
                    async move {
                        // As the auth service checks it: the point service's own credential.
                        let verifier = testkit::identity::verifier(service_identity::Service::Auth);
                        let route = service_identity::InternalRoute::ClientProfile;
                        match verifier.admit(req.headers(), route) {
                            Ok(admitted) if admitted.caller == service_identity::Service::Point => {
                            }
                            _ => return HttpResponse::Unauthorized().finish(),
                        }
                        match profiles.get(&path) {
                            Some((first, last)) => HttpResponse::Ok().json(
                                json!({"client_id": *path, "first_name": first, "last_name": last}),
                            ),
                            None => HttpResponse::NotFound()
                                .json(json!({"status": 404, "message": "client not found"})),
                        }
                    }
                }),
            )
    })
    .unwrap()
}

/// Plays the payment service: card ids starting with `fail4xx` get 402, `fail5xx` 500,
/// `hang` an answer after 5 s; `tap-<x>` the payment `pay_<x>`, `gate-<x>` the same once
/// the test releases the [`Gate`]; anything else the pending payment `pay_123`.
fn spawn_fake_payments(recorded: Recorded, gate: Arc<Gate>) -> String {
    server::spawn_local(move || {
        let recorded = recorded.clone();
        let sessions = recorded.clone();
        let gate = gate.clone();
        App::new()
            .route(
                "/v1/payments",
                web::post().to(move |body: web::Json<Value>| {
                    let recorded = recorded.clone();
                    let gate = gate.clone();
                    async move {
                        recorded.lock().unwrap().push(("payment".into(), body.0.clone()));
                        let card = body["source"]["card_id"].as_str().unwrap_or_default().to_owned();
                        if let Some(x) = card.strip_prefix("gate-") {
                            gate.asked.add_permits(1);
                            gate.release.acquire().await.unwrap().forget();
                            return HttpResponse::Ok().json(json!({
                                "id": format!("pay_{x}"), "status": "pending", "redirect_url": "http://sandbox/3ds"
                            }));
                        }
                        if let Some(x) = card.strip_prefix("tap-") {
                            return HttpResponse::Ok().json(json!({
                                "id": format!("pay_{x}"), "status": "pending", "redirect_url": "http://sandbox/3ds"
                            }));
                        }
                        if card.starts_with("fail4xx") {
                            return HttpResponse::PaymentRequired()
                                .json(json!({"error": "card_declined", "message": "insufficient funds"}));
                        }
                        if card.starts_with("fail5xx") {
                            return HttpResponse::InternalServerError().json(json!({"error": "boom"}));
                        }
                        if card.starts_with("hang") {
                            tokio::time::sleep(Duration::from_secs(5)).await;
                        }
                        HttpResponse::Ok().json(json!({
                            "id": "pay_123", "status": "pending", "redirect_url": "http://sandbox/3ds/pay_123"
                        }))
                    }
                }),
            )
            .route(
                "/v1/payment-sessions",
                web::post().to(move |body: web::Json<Value>| {
                    let recorded = sessions.clone();
                    async move {
                        recorded.lock().unwrap().push(("session".into(), body.0.clone()));
                        HttpResponse::Ok().json(json!({"id": "ses_1", "session_token": "tok_abc"}))
                    }
                }),
            )
    })
    .unwrap()
}

impl TestApp {
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    pub async fn get(&self, path: &str, client: i64) -> (u16, Value) {
        answer(
            self.client
                .get(self.url(path))
                .bearer_auth(token(client))
                .send()
                .await
                .unwrap(),
        )
        .await
    }

    pub async fn post(&self, path: &str, client: i64, body: &Value) -> (u16, Value) {
        answer(
            self.client
                .post(self.url(path))
                .bearer_auth(token(client))
                .json(body)
                .send()
                .await
                .unwrap(),
        )
        .await
    }

    /// `GET /points`: the caller's balance.
    pub async fn balance(&self, client: i64) -> (u16, Value) {
        self.get(&paths::balance(), client).await
    }

    /// `GET /point-history?{query}` (no `?` when `query` is empty).
    pub async fn history(&self, query: &str, client: i64) -> (u16, Value) {
        self.get(&paths::with_query(paths::history(), query), client)
            .await
    }

    /// `GET /points-faq`.
    pub async fn faq(&self, client: i64) -> (u16, Value) {
        self.get(&paths::faq(), client).await
    }

    /// `GET /point-offers?{query}` (no `?` when `query` is empty).
    pub async fn offers(&self, query: &str, client: i64) -> (u16, Value) {
        self.get(&paths::with_query(paths::offers(), query), client)
            .await
    }

    /// `GET /point-offers/{id}`.
    pub async fn offer(&self, id: &str, client: i64) -> (u16, Value) {
        self.get(&paths::offer(id), client).await
    }

    /// `GET /point-occasions?{query}` (no `?` when `query` is empty).
    pub async fn occasions(&self, query: &str, client: i64) -> (u16, Value) {
        self.get(&paths::with_query(paths::occasions(), query), client)
            .await
    }

    /// `POST /point-orders`: creates an order.
    pub async fn order(&self, client: i64, body: &Value) -> (u16, Value) {
        self.post(&paths::orders(), client, body).await
    }

    /// `POST /point-orders/description`.
    pub async fn description(&self, client: i64, body: &Value) -> (u16, Value) {
        self.post(&paths::description(), client, body).await
    }

    /// `GET /point-orders/{correlation_id}`: one order.
    pub async fn get_order(&self, correlation_id: &str, client: i64) -> (u16, Value) {
        self.get(&paths::order(correlation_id), client).await
    }

    /// `POST /point-orders/{id}/pay/card`.
    pub async fn pay_card(&self, id: &str, client: i64, body: &Value) -> (u16, Value) {
        self.post(&paths::pay_card(id), client, body).await
    }

    /// `POST /point-orders/{id}/pay/session`.
    pub async fn pay_session(&self, id: &str, client: i64, body: &Value) -> (u16, Value) {
        self.post(&paths::pay_session(id), client, body).await
    }

    /// `POST /internal/v1/credits` as the order service.
    pub async fn credit(&self, body: &Value) -> (u16, Value) {
        let request = self
            .client
            .post(self.url(paths::CREDITS))
            .header("authorization", from_order(&body.to_string()))
            .header("content-type", "application/json")
            .body(body.to_string());
        answer(request.send().await.unwrap()).await
    }

    pub async fn balance_of(&self, client: i64) -> String {
        self.balance(client).await.1["points"]
            .as_str()
            .unwrap()
            .to_owned()
    }

    pub async fn sql(&self, statement: &str) {
        self.database.execute(statement).await;
    }

    /// Moves every ledger entry a year back: the fixture's Sara then earned last on
    /// 2025-04-01 (Riyadh) and her expiry date, 2026-04-01, has passed by the database's
    /// clock, which a real `expire-points` run requires.
    pub async fn a_year_earlier(&self) {
        self.rewrite_entries(
            "UPDATE point_entries SET created_at = created_at - interval '1 year'",
        )
        .await;
    }

    /// The ledger a year older ([`Self::a_year_earlier`]), then one run of the expiry job as
    /// of the database's today: what it did.
    pub async fn expire_a_year_later(&self) -> point_service::expiry::job::Summary {
        self.a_year_earlier().await;
        let options = point_service::expiry::job::Options {
            today: None,
            batch_size: 10,
            dry_run: false,
        };
        let mut conn = self.database.connect().await;
        point_service::expiry::job::run(&mut conn, options, |_| std::ops::ControlFlow::Continue(()))
            .await
            .unwrap()
    }

    /// Runs `statement` with the ledger's append-only trigger off: a test that moves the
    /// ledger back in time (the database's clock cannot be moved forward).
    pub async fn rewrite_entries(&self, statement: &str) {
        self.sql(&format!(
            "BEGIN;
             ALTER TABLE point_entries DISABLE TRIGGER point_entries_append_only;
             {statement};
             ALTER TABLE point_entries ENABLE TRIGGER point_entries_append_only;
             COMMIT;"
        ))
        .await;
    }

    /// Today's Asia/Riyadh date by the database's clock, `YYYY-MM-DD`.
    pub async fn today(&self) -> String {
        let mut conn = self.database.connect().await;
        point_service::riyadh::text(point_service::riyadh::today(&mut conn).await.unwrap())
    }

    /// One number from SQL: `SELECT count(*) AS n …`.
    pub async fn count(&self, query: &str) -> i64 {
        self.database.count(query).await
    }

    /// Posts a signed webhook event.
    pub async fn webhook(&self, event: &Value, secret: &str, timestamp: i64) -> (u16, Value) {
        self.webhook_raw(&event.to_string(), secret, timestamp)
            .await
    }

    /// Posts `body`, byte for byte, signed.
    pub async fn webhook_raw(&self, body: &str, secret: &str, timestamp: i64) -> (u16, Value) {
        let signature = testkit::tokens::webhook_signature(secret, timestamp, body);
        let response = self
            .client
            .post(self.url(paths::WEBHOOK))
            .header("x-signature", signature)
            .header("content-type", "application/json")
            .body(body.to_owned())
            .send()
            .await
            .unwrap();
        answer(response).await
    }
}

/// The paths of the service's routes, the relayed ones under [`relayed_routes::PREFIX`]. Tests
/// about the router itself (odd ids, encodings, unknown routes) write their paths by hand.
pub mod paths {
    use relayed_routes::PREFIX;

    pub const WEBHOOK: &str = "/webhooks/v1/payments";
    pub const CREDITS: &str = "/internal/v1/credits";

    pub fn balance() -> String {
        format!("{PREFIX}/points")
    }

    pub fn history() -> String {
        format!("{PREFIX}/point-history")
    }

    pub fn faq() -> String {
        format!("{PREFIX}/points-faq")
    }

    pub fn offers() -> String {
        format!("{PREFIX}/point-offers")
    }

    pub fn offer(id: &str) -> String {
        format!("{PREFIX}/point-offers/{id}")
    }

    pub fn occasions() -> String {
        format!("{PREFIX}/point-occasions")
    }

    pub fn orders() -> String {
        format!("{PREFIX}/point-orders")
    }

    pub fn description() -> String {
        format!("{PREFIX}/point-orders/description")
    }

    pub fn order(correlation_id: &str) -> String {
        format!("{PREFIX}/point-orders/{correlation_id}")
    }

    pub fn pay_card(id: &str) -> String {
        format!("{PREFIX}/point-orders/{id}/pay/card")
    }

    pub fn pay_session(id: &str) -> String {
        format!("{PREFIX}/point-orders/{id}/pay/session")
    }

    /// `path?query`, or `path` when `query` is empty.
    pub fn with_query(path: String, query: &str) -> String {
        if query.is_empty() {
            path
        } else {
            format!("{path}?{query}")
        }
    }
}

/// The service's binary with `args`, against `database_url`, with a clean environment and
/// warnings only in its log (its stdout is its answer).
pub fn point_service_command(database_url: &str, args: &[&str]) -> std::process::Command {
    let binary = env!("CARGO_BIN_EXE_point-service");
    let mut command = testkit::command::service(binary, database_url, args);
    command.env("RUST_LOG", "warn");
    command
}

pub fn order_body(to: i64, payment_type: &str) -> Value {
    json!({"point_offer_id": OFFER, "to_client_id": to, "payment_type": payment_type})
}

pub const ORDER_KEYS: [&str; 9] = [
    "correlation_id",
    "order_no",
    "status",
    "payment_status",
    "point_amount",
    "purchased_point_amount",
    "money_amount",
    "payment_type",
    "order_type",
];
