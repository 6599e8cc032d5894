//! A rolling restart loses no request between our services. Two replicas of each service sit
//! behind a balancer that plays kube-proxy (a connection stays on its replica until one side
//! closes it); every replica of the auth, point, order and operator services is restarted in
//! turn, as a rollout does (out of the balancer, preStop, SIGTERM, drain, start, ready), again
//! and again,
//! while the app's calls run without pause through the order service (relayed reads, point
//! orders, card orders with their pay call, gift-code redemptions with their credit) and the
//! admin panel's through the operator service (a client's points, the gift-code batches). Each
//! crosses a service pair: order → point (relay, credit), point → auth and order → auth
//! (caller and profile lookups), operator → point and operator → order (the back office).
//! Every answer must be the one no restart would have given: no 5xx, no connection error.
//!
//! The waits are the rollout's, scaled down so the test is short: callers drop an idle
//! connection after 1 s (`HTTP_CALLER_IDLE_SECS`), as the app's own client here does too, and
//! a stopping server drains for up to 6 s (`HTTP_STOP_DRAIN_SECS`, over once no connection is
//! open). On the main of
//! 2026-12-06 (a server closed its idle kept-alive connections at once on SIGTERM, and a
//! stopping worker took database connections other workers were using with it) this test
//! saw 502s and 500s in every run.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use e2e::money::{self, CLIENTS};
use e2e::replicated::{AUTH, OPERATOR, ORDER, POINTS, ReplicatedStack};
use e2e::stack::Databases;
use e2e::{demo_database, operator_token};
use serde_json::{Value, json};
use tokio::sync::Mutex;

/// Restarts of each replica of each restarted service.
const ROUNDS: usize = 3;
const PRE_STOP: Duration = Duration::from_millis(300);

#[tokio::test]
async fn every_call_is_answered_while_each_service_is_rolled_replica_by_replica() {
    let auth_db = demo_database(&["auth-service"], "auth").await;
    let points_db = demo_database(&["point-service"], "points").await;
    let catalog_db = demo_database(&["order-service", "operator-service"], "catalog").await;
    money::fund(points_db.url(), 10_000_000).await;
    money::add_gift_codes(catalog_db.url(), "RS", 2_000, "5").await;
    let mut stack = ReplicatedStack::start(
        &Databases {
            auth: auth_db.url().to_owned(),
            points: points_db.url().to_owned(),
            catalog: catalog_db.url().to_owned(),
        },
        2,
        &[
            ("HTTP_CALLER_IDLE_SECS", "1"),
            ("HTTP_STOP_DRAIN_SECS", "6"),
        ],
        &[],
    )
    .await;

    let load = Load {
        order: stack.url(ORDER),
        operator: stack.url(OPERATOR),
        admin: operator_token("admin", "rolling-1", 1),
        // The app's side, set as a caller of ours is: an idle connection dropped after 1 s.
        http: reqwest::Client::builder()
            .pool_idle_timeout(Duration::from_secs(1))
            .timeout(Duration::from_secs(30))
            .build()
            .unwrap(),
        stop: Arc::new(AtomicBool::new(false)),
        sent: Arc::new(AtomicUsize::new(0)),
        failures: Arc::new(Mutex::new(Vec::new())),
        codes: Arc::new(AtomicUsize::new(0)),
    };
    let workers: Vec<_> = (0..8)
        .map(|worker| tokio::spawn(load.clone().run(worker)))
        .collect();

    let mut restarts = 0;
    for _ in 0..ROUNDS {
        for service in [POINTS, AUTH, ORDER, OPERATOR] {
            for replica in 0..2 {
                stack.restart(service, replica, PRE_STOP).await;
                restarts += 1;
            }
        }
    }
    load.stop.store(true, Ordering::SeqCst);
    for worker in workers {
        worker.await.unwrap();
    }

    let failures = load.failures.lock().await;
    let sent = load.sent.load(Ordering::SeqCst);
    assert!(
        failures.is_empty(),
        "{} of {sent} calls failed over {restarts} restarts:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(sent > 100, "only {sent} calls in {restarts} restarts");
}

/// The app's calls, sent without pause until `stop`.
#[derive(Clone)]
struct Load {
    order: String,
    operator: String,
    /// An admin's token for the back office.
    admin: String,
    http: reqwest::Client,
    stop: Arc<AtomicBool>,
    sent: Arc<AtomicUsize>,
    failures: Arc<Mutex<Vec<String>>>,
    /// The next gift code to redeem.
    codes: Arc<AtomicUsize>,
}

impl Load {
    async fn run(self, worker: usize) {
        let (_, token) = CLIENTS[worker % CLIENTS.len()];
        let (friend, _) = CLIENTS[(worker + 1) % CLIENTS.len()];
        let mut turn = 0usize;
        while !self.stop.load(Ordering::SeqCst) {
            turn += 1;
            match (worker + turn) % 6 {
                0 => {
                    self.expect("GET", "/api/v2/client/points", token, &[], None, 200)
                        .await;
                }
                1 => {
                    let key = uuid::Uuid::new_v4().to_string();
                    let body = json!({"point_offer_id": money::OFFER, "to_client_id": friend,
                        "payment_type": "point"});
                    let path = "/api/v2/client/point-orders";
                    self.expect(
                        "POST",
                        path,
                        token,
                        &[("Idempotency-Key", &key)],
                        Some(&body),
                        200,
                    )
                    .await;
                }
                2 => {
                    let body = json!({"point_offer_id": money::OFFER, "to_client_id": 1001,
                        "payment_type": "checkout"});
                    let path = "/api/v2/client/point-orders";
                    let Some(order) = self
                        .expect("POST", path, token, &[], Some(&body), 200)
                        .await
                    else {
                        continue;
                    };
                    let id = order["correlation_id"].as_str().unwrap_or_default();
                    let pay = json!({"id": "card_e2e", "cvv": "123"});
                    let path = format!("/api/v2/client/point-orders/{id}/pay/card");
                    self.expect("POST", &path, token, &[], Some(&pay), 200)
                        .await;
                }
                3 => {
                    let path = format!("/api/v1/operator/clients/{friend}/points");
                    self.back_office(&path).await;
                }
                4 => self.back_office("/api/v1/operator/gift-code-batches").await,
                _ => {
                    let code = format!("RS-{:04}", self.codes.fetch_add(1, Ordering::SeqCst));
                    let body = json!({"code": code});
                    let path = "/api/v2/client/gift-card-code";
                    self.expect("POST", path, token, &[], Some(&body), 200)
                        .await;
                }
            }
        }
    }

    /// An admin's read through the operator service.
    async fn back_office(&self, path: &str) {
        let url = format!("{}{path}", self.operator);
        self.send("GET", &url, &self.admin, &[], None, 200).await;
    }

    /// Sends one call of the app; records it as a failure unless it answers `want`. The
    /// answer's body.
    async fn expect(
        &self,
        method: &str,
        path: &str,
        token: &str,
        headers: &[(&str, &str)],
        body: Option<&Value>,
        want: u16,
    ) -> Option<Value> {
        let url = format!("{}{path}", self.order);
        self.send(method, &url, token, headers, body, want).await
    }

    async fn send(
        &self,
        method: &str,
        url: &str,
        token: &str,
        headers: &[(&str, &str)],
        body: Option<&Value>,
        want: u16,
    ) -> Option<Value> {
        self.sent.fetch_add(1, Ordering::SeqCst);
        let mut request = self
            .http
            .request(method.parse().unwrap(), url)
            .bearer_auth(token);
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        if let Some(body) = body {
            request = request.json(body);
        }
        let failure = match request.send().await {
            Ok(response) => {
                let status = response.status().as_u16();
                let text = response.text().await.unwrap_or_default();
                if status == want {
                    return serde_json::from_str(&text).ok();
                }
                format!("{method} {url}: {status} {text}")
            }
            Err(e) => format!("{method} {url}: {}", telemetry::client::error_chain(&e)),
        };
        self.failures.lock().await.push(failure);
        None
    }
}
