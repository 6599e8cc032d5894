//! `spawn_app()`: the real app on port 0 with a seeded database of its own and a fake SMS
//! gateway (a real HTTP server) that records what it is asked to send.

pub use service_identity::Service;
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_web::{App, HttpResponse, HttpServer, web};
use auth_service::client_limits::ClientLimits;
use auth_service::clock::Clock;
use auth_service::config::{Config, SmsConfig};
use auth_service::otp::Limits;
use auth_service::tokens::TokenKeys;
use db::testing::TestDatabase;
use serde_json::{Value, json};
use server::{AppEnv, CommonConfig, Secret};
pub use testkit::{answer, keys, without_stack};

pub const SECRET: &str = "test-secret-of-the-auth-service-0123456789";
/// The `Authorization` of a call from `caller` to this service (development keys).
pub fn from(caller: Service) -> String {
    testkit::identity::authorization(caller, Service::Auth)
}
pub const TEST_CODE: &str = "4321";

/// Sara: test mode. Omar: real SMS. Noura: another client. Closed: inactive.
pub const SARA: i64 = 1001;
pub const OMAR: i64 = 1002;
pub const NOURA: i64 = 1003;
pub const CLOSED: i64 = 1099;
pub const SARA_LEGACY: &str = "legacy-token-of-sara-0123456789abcdef";
pub const CLOSED_LEGACY: &str = "legacy-token-of-closed-0123456789abcdef";

pub fn fixture() -> Value {
    let client = |id: i64, phone: &str, first: &str, status: &str, test_mode: bool| {
        json!({"client_id": id, "odoo_id": (id + 4000).to_string(), "contact_phone": phone, "status": status,
               "email_address": null, "first_name": first, "last_name": "Ali", "sex": 2, "birth_date": "1990-05-01",
               "receive_offers": 1, "push_enabled": 1, "is_food_truck_user": 0, "is_cod_disabled": 0,
               "test_mode": test_mode})
    };
    json!({
        "clients": [client(SARA, "+966500000001", "Sara", "active", true),
                    client(OMAR, "+966500000002", "Omar", "active", false),
                    client(NOURA, "+966500000003", "Noura", "active", false),
                    client(CLOSED, "+966500000099", "Closed", "inactive", true)],
        "legacy_tokens": [{"client_id": SARA, "token": SARA_LEGACY}, {"client_id": CLOSED, "token": CLOSED_LEGACY}]
    })
}

/// What the fake gateway does with a message.
#[derive(Clone)]
pub enum Gateway {
    Accepts,
    Fails,
    /// Answers only after the service's 2 s timeout.
    Hangs,
    /// Holds every message until the test opens the gate, then accepts it.
    Gated(GateHandle),
}

/// The gateway's side of a gate: it reports each arrival, then waits for the gate to open.
#[derive(Clone)]
pub struct GateHandle {
    arrivals: tokio::sync::mpsc::UnboundedSender<()>,
    open: tokio::sync::watch::Receiver<bool>,
}

/// The test's side of a gate.
pub struct Gate {
    arrivals: tokio::sync::mpsc::UnboundedReceiver<()>,
    open: tokio::sync::watch::Sender<bool>,
}

/// A closed gate for [`Gateway::Gated`].
pub fn gate() -> (GateHandle, Gate) {
    let (arrivals_tx, arrivals) = tokio::sync::mpsc::unbounded_channel();
    let (open, open_rx) = tokio::sync::watch::channel(false);
    (
        GateHandle {
            arrivals: arrivals_tx,
            open: open_rx,
        },
        Gate { arrivals, open },
    )
}

impl Gate {
    /// Waits until `n` more messages are held at the gate.
    pub async fn held(&mut self, n: usize) {
        for _ in 0..n {
            self.arrivals.recv().await.unwrap();
        }
    }

    pub fn open(&self) {
        self.open.send(true).unwrap();
    }
}

pub struct Options {
    pub app_env: AppEnv,
    pub limits: Limits,
    pub client_limits: ClientLimits,
    pub gateway: Gateway,
    /// `OTP_TEST_CODE`; `None` as production without the Secret's value.
    pub test_code: Option<&'static str>,
    pub pool_size: usize,
    /// The codes' clock: the database's unless a test sets a manual one.
    pub otp_clock: Clock,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            app_env: AppEnv::Development,
            limits: Limits {
                sms_per_phone: 5,
                sms_per_ip: 20,
                tries_per_phone: 20,
                tries_per_ip: 50,
                unknown_phones_per_ip: 100,
            },
            client_limits: ClientLimits {
                lookups_per_hour: 30,
                legacy_tokens_per_hour: 20,
            },
            gateway: Gateway::Accepts,
            test_code: Some(TEST_CODE),
            pool_size: 4,
            otp_clock: Clock::Database,
        }
    }
}

pub struct TestApp {
    pub base: String,
    pub client: reqwest::Client,
    pub keys: TokenKeys,
    pub database: TestDatabase,
    /// `(to, message)` of every SMS the gateway received.
    pub sms: Arc<Mutex<Vec<(String, String)>>>,
}

pub async fn spawn_app() -> TestApp {
    spawn_app_with(Options::default()).await
}

pub async fn spawn_app_with(options: Options) -> TestApp {
    let database = testkit::seed::seeded_database(
        auth_service::db::MIGRATIONS,
        auth_service::seed::load,
        &fixture(),
    )
    .await;

    let sms: Arc<Mutex<Vec<(String, String)>>> = Arc::default();
    let gateway_url = spawn_gateway(sms.clone(), options.gateway.clone());
    let config = config(&database, &options, gateway_url);
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let server = auth_service::startup::build(config, listener).unwrap();
    tokio::spawn(server);
    TestApp {
        base,
        client: reqwest::Client::new(),
        keys: TokenKeys::new(SECRET.as_bytes()),
        database,
        sms,
    }
}

/// Another replica of `app`'s service: the same database, the default options and a gateway
/// of its own. Answers its base URL.
pub fn spawn_replica(app: &TestApp) -> String {
    let options = Options::default();
    let gateway_url = spawn_gateway(Arc::default(), options.gateway.clone());
    let config = config(&app.database, &options, gateway_url);
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(auth_service::startup::build(config, listener).unwrap());
    base
}

/// The service's configuration for a test: its database, the options, the gateway.
fn config(database: &TestDatabase, options: &Options, gateway_url: String) -> Config {
    Config {
        common: CommonConfig {
            app_env: options.app_env,
            workers: 1,
            ..testkit::config::common("auth-service")
        },
        database: testkit::config::database(database.url(), options.pool_size),
        jwt_secret: Secret::new(SECRET),
        identity: testkit::identity::verifier(Service::Auth),
        otp_test_code: options.test_code.map(Secret::new),
        otp_clock: options.otp_clock.clone(),
        sms: SmsConfig::Http {
            url: gateway_url,
            timeout: Duration::from_secs(2),
        },
        limits: options.limits,
        client_limits: options.client_limits,
        trust_forwarded_for: true,
    }
}

/// A real HTTP server playing the SMS gateway.
fn spawn_gateway(sink: Arc<Mutex<Vec<(String, String)>>>, behaviour: Gateway) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/send", listener.local_addr().unwrap());
    let server = HttpServer::new(move || {
        let sink = sink.clone();
        let behaviour = behaviour.clone();
        App::new().route(
            "/send",
            web::post().to(move |body: web::Json<Value>| {
                let sink = sink.clone();
                let behaviour = behaviour.clone();
                async move {
                    match behaviour {
                        Gateway::Fails => return HttpResponse::ServiceUnavailable().finish(),
                        Gateway::Hangs => tokio::time::sleep(Duration::from_secs(5)).await,
                        Gateway::Gated(mut gate) => {
                            gate.arrivals.send(()).unwrap();
                            gate.open.wait_for(|open| *open).await.unwrap();
                        }
                        Gateway::Accepts => {}
                    }
                    let to = body["to"].as_str().unwrap_or_default().to_owned();
                    let message = body["message"].as_str().unwrap_or_default().to_owned();
                    sink.lock().unwrap().push((to, message));
                    HttpResponse::Ok().finish()
                }
            }),
        )
    })
    .workers(1)
    .listen(listener)
    .unwrap()
    .run();
    tokio::spawn(server);
    url
}

impl TestApp {
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    pub fn primary(&self, client_id: i64) -> String {
        self.keys.issue_primary(client_id).unwrap()
    }

    pub async fn get(&self, path: &str, token: Option<&str>) -> reqwest::Response {
        let mut request = self.client.get(self.url(path));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        request.send().await.unwrap()
    }

    pub async fn send(
        &self,
        method: reqwest::Method,
        path: &str,
        token: Option<&str>,
        body: Option<&str>,
    ) -> reqwest::Response {
        let mut request = self.client.request(method, self.url(path));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        if let Some(body) = body {
            request = request
                .header("content-type", "application/json")
                .body(body.to_owned());
        }
        request.send().await.unwrap()
    }

    pub async fn put(&self, path: &str, token: Option<&str>, body: &Value) -> reqwest::Response {
        self.send(reqwest::Method::PUT, path, token, Some(&body.to_string()))
            .await
    }

    pub async fn post(&self, path: &str, token: Option<&str>, body: &Value) -> reqwest::Response {
        self.send(reqwest::Method::POST, path, token, Some(&body.to_string()))
            .await
    }

    /// A GET of `path` as a client at `ip` (the service trusts `x-forwarded-for`), no token.
    pub async fn get_from(&self, path: &str, ip: &str) -> reqwest::Response {
        self.client
            .get(self.url(path))
            .header("x-forwarded-for", ip)
            .send()
            .await
            .unwrap()
    }

    /// `GET /clients/reset-otp?{query}`: `query` as sent, its `+` encoded by the caller.
    pub async fn reset_otp(&self, query: &str) -> reqwest::Response {
        self.get(&paths::with_query(paths::reset_otp(), query), None)
            .await
    }

    /// `GET /clients/verify-otp?{query}`: `query` as sent, its `+` encoded by the caller.
    pub async fn verify_otp(&self, query: &str) -> reqwest::Response {
        self.get(&paths::with_query(paths::verify_otp(), query), None)
            .await
    }

    /// `GET /clients/verify-token`: the caller's profile.
    pub async fn verify_token(&self, token: Option<&str>) -> reqwest::Response {
        self.get(&paths::verify_token(), token).await
    }

    /// `POST /clients/exchange-token`, without a token.
    pub async fn exchange_token(&self, body: &Value) -> reqwest::Response {
        self.post(&paths::exchange_token(), None, body).await
    }

    /// `GET /users`: the legacy caller's profile.
    pub async fn users(&self, token: Option<&str>) -> reqwest::Response {
        self.get(&paths::users(), token).await
    }

    /// `GET /clients?{query}`: a client by phone.
    pub async fn find_client(&self, query: &str, token: Option<&str>) -> reqwest::Response {
        self.get(&paths::with_query(paths::clients(), query), token)
            .await
    }

    /// `PUT /clients/{client_id}`: the profile.
    pub async fn update_profile(
        &self,
        client_id: i64,
        token: Option<&str>,
        body: &Value,
    ) -> reqwest::Response {
        self.put(&paths::client(client_id), token, body).await
    }

    /// `GET /clients/address-book`.
    pub async fn address_book(&self, token: Option<&str>) -> reqwest::Response {
        self.get(&paths::address_book(), token).await
    }

    /// `POST /clients/address-book`.
    pub async fn add_address(&self, token: Option<&str>, body: &Value) -> reqwest::Response {
        self.post(&paths::address_book(), token, body).await
    }

    /// `GET /clients/address-book/{id}`.
    pub async fn address(&self, id: &str, token: Option<&str>) -> reqwest::Response {
        self.get(&paths::address(id), token).await
    }

    /// `PUT /clients/address-book/{id}`.
    pub async fn update_address(
        &self,
        id: &str,
        token: Option<&str>,
        body: &Value,
    ) -> reqwest::Response {
        self.put(&paths::address(id), token, body).await
    }

    /// `DELETE /clients/address-book/{id}`.
    pub async fn delete_address(&self, id: &str, token: Option<&str>) -> reqwest::Response {
        self.send(reqwest::Method::DELETE, &paths::address(id), token, None)
            .await
    }

    /// `GET /internal/v1/clients/{id}` with `authorization` as its `Authorization`.
    pub async fn internal_client(
        &self,
        id: &str,
        authorization: Option<&str>,
    ) -> reqwest::Response {
        let mut request = self.client.get(self.url(&paths::internal_client(id)));
        if let Some(authorization) = authorization {
            request = request.header("authorization", authorization);
        }
        request.send().await.unwrap()
    }

    pub async fn sql(&self, statement: &str) {
        self.database.execute(statement).await;
    }

    /// The codes the gateway was asked to send to `phone`.
    pub fn codes_sent_to(&self, phone: &str) -> Vec<String> {
        self.sms
            .lock()
            .unwrap()
            .iter()
            .filter(|(to, _)| to == phone)
            .map(|(_, message)| {
                message
                    .chars()
                    .filter(char::is_ascii_digit)
                    .take(4)
                    .collect()
            })
            .collect()
    }
}

/// The 13 keys of a profile, in order.
pub const PROFILE_KEYS: [&str; 13] = [
    "client_id",
    "odoo_id",
    "contact_phone",
    "status",
    "email_address",
    "first_name",
    "last_name",
    "sex",
    "birth_date",
    "receive_offers",
    "push_enabled",
    "is_food_truck_user",
    "is_cod_disabled",
];

/// The paths of the service's routes. `src/routes.rs` writes its scopes (`/api/v1`,
/// `/internal/v1`) as literals, with no constant to borrow, so they are named once here. Tests
/// about the router itself (odd or bad ids, encodings, unknown routes, the route list) write
/// their paths by hand.
pub mod paths {
    pub const API: &str = "/api/v1";
    pub const INTERNAL_API: &str = "/internal/v1";

    pub fn reset_otp() -> String {
        format!("{API}/clients/reset-otp")
    }

    pub fn verify_otp() -> String {
        format!("{API}/clients/verify-otp")
    }

    pub fn verify_token() -> String {
        format!("{API}/clients/verify-token")
    }

    pub fn exchange_token() -> String {
        format!("{API}/clients/exchange-token")
    }

    pub fn add_device_id() -> String {
        format!("{API}/clients/add-device-id")
    }

    pub fn setting() -> String {
        format!("{API}/clients/setting")
    }

    pub fn address_book() -> String {
        format!("{API}/clients/address-book")
    }

    pub fn address(id: &str) -> String {
        format!("{API}/clients/address-book/{id}")
    }

    /// The lookup by phone.
    pub fn clients() -> String {
        format!("{API}/clients")
    }

    /// A client's profile.
    pub fn client(client_id: i64) -> String {
        format!("{API}/clients/{client_id}")
    }

    pub fn users() -> String {
        format!("{API}/users")
    }

    pub fn internal_client(id: &str) -> String {
        format!("{INTERNAL_API}/clients/{id}")
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
