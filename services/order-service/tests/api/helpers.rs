//! `spawn_app()`: the real app on port 0 with a catalog database of its own, a fake auth
//! service and a fake point service (both real HTTP servers).

use std::net::TcpListener;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_web::{App, HttpRequest, HttpResponse, web};
use db::testing::TestDatabase;
use order_service::config::{Config, CreditTarget, GiftCardCredit, GiftCardRetry};
use serde_json::{Value, json};
pub use server::AppEnv;
use server::{CommonConfig, HttpLimits};
pub use testkit::answer;

pub fn token(client: i64) -> String {
    format!("token-{client}")
}

pub fn fixture() -> Value {
    json!({
        "point_rates": [{"amount_from": 100, "amount_to": null, "point_earn": 30},
                        {"amount_from": null, "amount_to": 50, "point_earn": 5},
                        {"amount_from": 50, "amount_to": 100, "point_earn": 12}],
        "gift_card_codes": [{"code": "WELCOME-100", "points": 100, "active": true},
                            {"code": "OLD-50", "points": 50, "active": false},
                            {"code": "RAMADAN-250", "points": 250, "active": true}],
        "stores": [],
        "banners": []
    })
}

pub struct Options {
    pub relay_timeout: Duration,
    /// False: nothing listens where the point service should be.
    pub point_service: bool,
    pub tries_per_client: i64,
    /// False: AUTH_SERVICE_URL is not set.
    pub auth_service: bool,
    pub app_env: AppEnv,
    /// `NEAREST_STORE_CACHE_SECONDS`; zero (no cache) unless a test is about the cache.
    pub nearest_cache_ttl: Duration,
    pub tries_per_ip: i64,
    /// A test's own point service instead of the default fake.
    pub point_service_url: Option<String>,
    /// `USE_POINT_SERVICE`: where new gift-card redemptions are credited.
    pub use_point_service: bool,
    /// `LEGACY_URL`.
    pub legacy_url: Option<String>,
    /// The gift-card retry task; its interval is an hour (it stays idle) unless a test is
    /// about it.
    pub gift_card_retry: GiftCardRetry,
    /// `DATABASE_POOL_SIZE`.
    pub pool_size: usize,
    /// `NATS_URL`, `EVENTS_POLL_MS`: no NATS unless a test is about the events.
    pub events: outbox::EventSettings,
    /// `HTTP_WORKERS`.
    pub workers: usize,
    /// `HTTP_CALLER_IDLE_SECS`.
    pub caller_idle: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            relay_timeout: Duration::from_secs(5),
            point_service: true,
            tries_per_client: 10,
            auth_service: true,
            app_env: AppEnv::Development,
            nearest_cache_ttl: Duration::ZERO,
            tries_per_ip: 1000,
            point_service_url: None,
            use_point_service: true,
            legacy_url: None,
            gift_card_retry: GiftCardRetry {
                interval: Duration::from_secs(3600),
                max_backoff: Duration::from_secs(3600),
                lease: Duration::from_secs(60),
            },
            pool_size: 10,
            events: outbox::EventSettings::default(),
            workers: testkit::config::common("order-service").workers,
            caller_idle: HttpLimits::default().caller_idle,
        }
    }
}

pub struct TestApp {
    pub base: String,
    pub client: reqwest::Client,
    pub database: TestDatabase,
    /// Credits the fake point service received.
    pub credits: Arc<Mutex<Vec<Value>>>,
    /// While true, the fake point service answers credits with 503.
    pub credits_fail: Arc<AtomicBool>,
    /// The point service's URL the app was started with (`http://host:port`).
    pub point_url: String,
}

pub async fn spawn_app() -> TestApp {
    spawn_app_with(Options::default()).await
}

pub async fn spawn_app_with(options: Options) -> TestApp {
    let database = testkit::seed::seeded_database(
        catalog_db::MIGRATIONS,
        order_service::seed::load,
        &fixture(),
    )
    .await;
    let credits: Arc<Mutex<Vec<Value>>> = Arc::default();
    let credits_fail = Arc::new(AtomicBool::new(false));
    let point_url = match (&options.point_service_url, options.point_service) {
        (Some(url), _) => url.clone(),
        (None, true) => fake_point_service(credits_fail.clone(), credits.clone()),
        (None, false) => format!(
            "http://127.0.0.1:{}",
            TcpListener::bind("127.0.0.1:0")
                .unwrap()
                .local_addr()
                .unwrap()
                .port()
        ),
    };
    let base = start(database.url(), &point_url, &options);
    TestApp {
        base,
        client: reqwest::Client::new(),
        database,
        credits,
        credits_fail,
        point_url,
    }
}

/// One app (one replica) on `database_url`, its point service at `point_url`; its base URL.
pub fn start(database_url: &str, point_url: &str, options: &Options) -> String {
    let config = config(database_url, point_url, options);
    // As the binary does (no exporter: the trace context flows without OpenTelemetry spans).
    let _ = telemetry::init(&config.common.telemetry);
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(order_service::startup::build(config, listener).unwrap());
    base
}

/// The service's configuration for a test: its database, its point service, the options.
fn config(database_url: &str, point_url: &str, options: &Options) -> Config {
    Config {
        common: CommonConfig {
            app_env: options.app_env,
            workers: options.workers,
            http: HttpLimits {
                caller_idle: options.caller_idle,
                ..HttpLimits::default()
            },
            ..testkit::config::common("order-service")
        },
        database: testkit::config::database(database_url, options.pool_size),
        point_service_url: point_url.to_owned(),
        relay_timeout: options.relay_timeout,
        pay_timeout: options.relay_timeout * 2,
        auth_service_url: options.auth_service.then(fake_auth),
        signer: testkit::identity::signer(service_identity::Service::Order),
        identity: testkit::identity::verifier(service_identity::Service::Order),
        credit: GiftCardCredit {
            target: if options.use_point_service {
                CreditTarget::PointService
            } else {
                CreditTarget::Legacy
            },
            legacy_url: options.legacy_url.clone(),
        },
        tries_per_client: options.tries_per_client,
        tries_per_ip: options.tries_per_ip,
        trust_forwarded_for: true,
        nearest_cache_ttl: options.nearest_cache_ttl,
        gift_card_retry: options.gift_card_retry,
        hostname: None,
        events: options.events.clone(),
    }
}

/// `token-<id>` is client `<id>`.
fn fake_auth() -> String {
    server::spawn_local(|| {
        App::new().route(
            "/api/v1/users",
            web::get().to(|req: HttpRequest| async move {
                let token = req
                    .headers()
                    .get("authorization")
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or("");
                match token
                    .strip_prefix("Bearer token-")
                    .and_then(|id| id.parse::<i64>().ok())
                {
                    Some(id) => {
                        HttpResponse::Ok().json(json!({"status": 200, "data": {"client_id": id}}))
                    }
                    None => HttpResponse::Unauthorized()
                        .json(json!({"status": 401, "message": "Unauthorization"})),
                }
            }),
        )
    })
    .unwrap()
}

/// Echoes relayed requests with status 207 and its own content type; `points-faq` hangs
/// for 3 s; credits are recorded.
fn fake_point_service(fail: Arc<AtomicBool>, credits: Arc<Mutex<Vec<Value>>>) -> String {
    server::spawn_local(move || {
        let credits = credits.clone();
        let fail = fail.clone();
        App::new()
            .route(
                "/internal/v1/credits",
                web::post().to(move |req: HttpRequest, raw: web::Bytes| {
                    let credits = credits.clone();
                    let fail = fail.load(Ordering::SeqCst);
                    async move {
                        if fail {
                            return HttpResponse::ServiceUnavailable().finish();
                        }
                        let mut body: Value = serde_json::from_slice(&raw).unwrap();
                        // Who the credential says called, if the point service would admit it
                        // for this very request and body.
                        let verifier =
                            testkit::identity::verifier(service_identity::Service::Point);
                        let target = req.uri().path_and_query().map_or("", |pq| pq.as_str());
                        let received = service_identity::Request::received(
                            req.method().as_str(),
                            target,
                            &raw,
                        );
                        body["caller"] = json!(
                            verifier
                                .admit(req.headers(), service_identity::InternalRoute::Credits)
                                .and_then(|admitted| admitted.made_for(&received))
                                .ok()
                                .map(|admitted| admitted.caller.name())
                        );
                        credits.lock().unwrap().push(body);
                        HttpResponse::Ok().json(json!({"ok": true}))
                    }
                }),
            )
            .default_service(web::to(|req: HttpRequest, body: web::Bytes| async move {
                if req.path().ends_with("/points-faq") {
                    tokio::time::sleep(Duration::from_secs(3)).await;
                }
                let headers: serde_json::Map<String, Value> = req
                    .headers()
                    .iter()
                    .map(|(name, value)| {
                        (name.to_string(), json!(value.to_str().unwrap_or_default()))
                    })
                    .collect();
                HttpResponse::build(actix_web::http::StatusCode::from_u16(207).unwrap())
                    .content_type("application/vnd.echo+json")
                    .json(json!({
                        "method": req.method().as_str(),
                        "path": req.path(),
                        "query": req.query_string(),
                        "headers": headers,
                        "body": String::from_utf8_lossy(&body),
                    }))
            }))
    })
    .unwrap()
}

impl TestApp {
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    pub async fn get(&self, path: &str) -> (u16, Value) {
        answer(self.client.get(self.url(path)).send().await.unwrap()).await
    }

    pub async fn sql(&self, statement: &str) {
        self.database.execute(statement).await;
    }

    pub async fn redeem(&self, client: i64, code: &str) -> (u16, Value) {
        redeem_at(&self.client, &self.base, client, code).await
    }

    /// `GET /system_configs/point_rates?{query}` (no `?` when `query` is empty).
    pub async fn point_rates(&self, query: &str) -> (u16, Value) {
        self.get(&paths::with_query(paths::point_rates(), query))
            .await
    }

    /// `GET /system-categories`: the home list.
    pub async fn system_categories(&self) -> (u16, Value) {
        self.get(&paths::system_categories()).await
    }

    /// `GET /system-categories/{id}`.
    pub async fn system_category(&self, id: i64) -> (u16, Value) {
        self.get(&paths::system_category(id)).await
    }

    /// `GET /system-categories/{id}/children?{query}` (no `?` when `query` is empty).
    pub async fn children(&self, id: i64, query: &str) -> (u16, Value) {
        self.get(&paths::with_query(paths::children(id), query))
            .await
    }

    /// `GET /stores?{query}`: a merchant's branches.
    pub async fn stores(&self, query: &str) -> (u16, Value) {
        self.get(&paths::with_query(paths::stores(), query)).await
    }

    /// `GET /stores/{id}`.
    pub async fn store(&self, id: i64) -> (u16, Value) {
        self.get(&paths::store(id)).await
    }

    /// `GET /banners/merchant/{merchant}/nearest-store?{query}` (no `?` when `query` is empty).
    pub async fn nearest_store(&self, merchant: &str, query: &str) -> (u16, Value) {
        self.get(&paths::with_query(paths::nearest_store(merchant), query))
            .await
    }
}

/// The paths of the service's own routes, under [`order_service::relayed_routes::PREFIX`].
/// Tests about the router itself (odd or bad ids, encodings, unknown routes, the route list)
/// and the relay's tests write their paths by hand.
pub mod paths {
    use order_service::relayed_routes::PREFIX;

    pub fn gift_card_code() -> String {
        format!("{PREFIX}/gift-card-code")
    }

    pub fn point_rates() -> String {
        format!("{PREFIX}/system_configs/point_rates")
    }

    pub fn system_categories() -> String {
        format!("{PREFIX}/system-categories")
    }

    pub fn system_category(id: i64) -> String {
        format!("{PREFIX}/system-categories/{id}")
    }

    pub fn children(id: i64) -> String {
        format!("{PREFIX}/system-categories/{id}/children")
    }

    pub fn stores() -> String {
        format!("{PREFIX}/stores")
    }

    pub fn store(id: i64) -> String {
        format!("{PREFIX}/stores/{id}")
    }

    pub fn nearest_store(merchant: &str) -> String {
        format!("{PREFIX}/banners/merchant/{merchant}/nearest-store")
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

/// `POST /gift-card-code` on the app (replica) at `base`.
pub async fn redeem_at(
    http: &reqwest::Client,
    base: &str,
    client: i64,
    code: &str,
) -> (u16, Value) {
    let response = http
        .post(format!("{base}{}", paths::gift_card_code()))
        .bearer_auth(token(client))
        .json(&json!({"code": code}))
        .send()
        .await
        .unwrap();
    answer(response).await
}

/// Envelope C with its status, as the tests compare answers.
pub fn error_c(status: u16, message: &str) -> (u16, Value) {
    (status, testkit::error_c(status, message))
}
