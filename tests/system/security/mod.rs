//! A cross-service security suite over the real binaries, the payment sandbox and
//! PostgreSQL seeded with the demo fixture. Each test starts one [`System`] and tries, from
//! the outside, what an attacker holding one client's tokens (or none) would try; one
//! module per concern:
//!
//! - [`access`]: other clients' orders, addresses and profiles, and operator routes with
//!   roles the spec does not admit;
//! - [`tokens`]: every kind of bad token on every family of routes (each envelope's exact
//!   401), and in exchange-token's body;
//! - [`webhook`]: forged, re-bodied, stale and unsigned payment webhooks, and a valid one
//!   twice;
//! - [`odd_input`]: SQL metacharacters, odd input and NUL bytes in every search, filter,
//!   path and query parameter;
//! - [`internal`]: the internal routes: never through the relay, never with a client's
//!   header, never without the token;
//! - [`logs`]: secrets and login codes in the logs of all five processes;
//! - [`limits`]: the door's limits: JSON bodies nested too deep on every route that takes a
//!   body, slow clients and too many connections through the `HTTP_*` variables.
//!
//! The per-service API tests (`services/*/tests/api/`) check most of these rules on one
//! service in process; these check them across the real processes, through the relay and
//! the real caller lookup, reading the outcome back as the owner. The expected bodies are
//! `testkit`'s envelopes; the demo's clients, offers and orders are `e2e::demo`'s.

mod access;
mod internal;
mod limits;
mod logs;
mod odd_input;
mod probes;
mod tokens;
mod webhook;

use db::testing::TestDatabase;
use e2e::DemoDatabases;
use e2e::stack::Stack;
use serde_json::{Value, json};

/// The development secrets every service is started with (`scripts/dev.env`); the attacks
/// need them.
fn auth_secret() -> &'static str {
    e2e::dev("AUTH_JWT_SECRET")
}

fn operator_secret() -> &'static str {
    e2e::dev("OPERATOR_JWT_SECRET")
}

fn webhook_secret() -> &'static str {
    e2e::dev("PAYMENT_WEBHOOK_SECRET")
}

/// An operator token from the binary's own `token` subcommand.
fn operator_token(role: &str, hours: i64) -> String {
    e2e::operator_token(role, "e2e-security", hours)
}

/// The three demo databases and the whole system over them (the databases must outlive
/// the processes).
struct System {
    stack: Stack,
    auth_db: TestDatabase,
    points_db: TestDatabase,
    catalog_db: TestDatabase,
}

async fn system(before_start: Option<&Value>) -> System {
    let databases = DemoDatabases::create("sec").await;
    if let Some(fixture) = before_start {
        seed(&databases.auth, "auth-service", fixture).await;
    }
    let stack = Stack::start(&databases.urls()).await;
    let DemoDatabases {
        auth: auth_db,
        points: points_db,
        catalog: catalog_db,
    } = databases;
    System {
        stack,
        auth_db,
        points_db,
        catalog_db,
    }
}

/// Loads an extra fixture with one service's `seed` subcommand.
async fn seed(database: &TestDatabase, service: &str, fixture: &Value) {
    let path = std::env::temp_dir().join(format!("security-{}.json", uuid::Uuid::new_v4()));
    std::fs::write(&path, fixture.to_string()).unwrap();
    let output = e2e::run(
        service,
        &["seed", path.to_str().unwrap()],
        database.url(),
        &[],
    )
    .await;
    let _ = std::fs::remove_file(&path);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

impl System {
    fn order(&self, path: &str) -> String {
        format!("{}{path}", self.stack.order.base)
    }

    fn auth(&self, path: &str) -> String {
        format!("{}{path}", self.stack.auth.base)
    }

    fn operator(&self, path: &str) -> String {
        format!("{}/api/v1/operator{path}", self.stack.operator.base)
    }

    async fn call(
        &self,
        method: &str,
        url: &str,
        token: Option<&str>,
        body: Option<&Value>,
    ) -> (u16, Value) {
        self.stack.call(method, url, token, &[], body).await
    }

    /// A request with a raw `Authorization` header value (or none).
    async fn call_with_authorization(
        &self,
        method: &str,
        url: &str,
        authorization: Option<&str>,
        body: Option<&Value>,
    ) -> (u16, Value) {
        let headers: Vec<(&str, &str)> = authorization
            .map(|a| vec![("Authorization", a)])
            .unwrap_or_default();
        self.stack.call(method, url, None, &headers, body).await
    }

    /// A primary token for a legacy token's client, by exchange-token.
    async fn primary(&self, legacy: &str) -> String {
        let (status, answer) = self
            .call(
                "POST",
                &self.auth("/api/v1/clients/exchange-token"),
                None,
                Some(&json!({"token": legacy, "target_platform": "primary"})),
            )
            .await;
        assert_eq!(status, 200, "{answer}");
        answer["data"]["token"].as_str().unwrap().to_owned()
    }

    async fn balance(&self, legacy: &str) -> Value {
        let (status, balance) = self
            .call(
                "GET",
                &self.order("/api/v2/client/points"),
                Some(legacy),
                None,
            )
            .await;
        assert_eq!(status, 200, "{balance}");
        balance
    }

    async fn create_order(&self, legacy: &str, body: &Value) -> String {
        let (status, created) = self
            .call(
                "POST",
                &self.order("/api/v2/client/point-orders"),
                Some(legacy),
                Some(body),
            )
            .await;
        assert_eq!(status, 200, "{created}");
        created["correlation_id"].as_str().unwrap().to_owned()
    }

    async fn read_order(&self, legacy: &str, id: &str) -> (u16, Value) {
        self.call(
            "GET",
            &self.order(&format!("/api/v2/client/point-orders/{id}")),
            Some(legacy),
            None,
        )
        .await
    }

    /// Posts a webhook body with a given `X-Signature` (or none) straight to the point
    /// service, as the payment service would.
    async fn webhook(&self, body: &str, signature: Option<&str>) -> (u16, Value) {
        let mut request = self
            .stack
            .points
            .client()
            .post(format!("{}/webhooks/v1/payments", self.stack.points.base))
            .header("content-type", "application/json")
            .body(body.to_owned());
        if let Some(signature) = signature {
            request = request.header("x-signature", signature);
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(Value::Null))
    }

    /// Every log line the five processes wrote before this call (each read off its pipe
    /// first), each with the process's name.
    async fn all_logs_written(&self) -> Vec<(&'static str, String)> {
        let s = &self.stack;
        let mut all = Vec::new();
        for service in [&s.auth, &s.points, &s.order, &s.operator, &s.sandbox] {
            for line in service.log().written().await {
                all.push((service.name, line));
            }
        }
        all
    }
}
