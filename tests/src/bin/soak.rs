//! `make soak`: the whole system under a mixed load while the point service, the order
//! service and PostgreSQL are killed and restarted under it, on loopback and a PostgreSQL
//! cluster of its own. Afterwards: `point-service audit` passes, every order the clients were
//! told succeeded exists as successful, every redeemed gift code was credited, and every 5xx
//! the clients saw is one the specification or DESIGN.md names. Prints the counts; exits 1 on
//! any failure.
//!
//! `SOAK_SECONDS` (default 600) bounds the load phase; `SOAK_WORKERS` (default 8) sets the
//! number of concurrent clients.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test driver fails loudly on purpose

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use e2e::stack::{Databases, Stack};
use e2e::{LocalCluster, create_database, migrate_and_seed, run};
use serde_json::{Value, json};
use tokio::sync::RwLock;

const CLIENTS: [(i64, &str); 5] = [
    (1001, "legacy-token-of-sara-0123456789abcdef"),
    (1002, "legacy-token-of-omar-0123456789abcdef"),
    (1003, "legacy-token-of-noura-0123456789abcdef"),
    (1004, "legacy-token-of-fahad-0123456789abcdef"),
    (1005, "legacy-token-of-reem-0123456789abcdef"),
];
const OFFER: &str = "64b7f0c2a1b2c3d4e5f60718";
const GIFT_CODES: usize = 5000;

/// What the clients saw, for the report and the checks.
#[derive(Default)]
struct Observed {
    /// (action, outcome) → count.
    counts: BTreeMap<(String, String), u64>,
    /// Orders the app was told are successful: (payer token, correlation id).
    successful: Vec<(&'static str, String)>,
    /// Card orders whose 3-D Secure approval the point service took.
    approved: Vec<(&'static str, String)>,
    /// Gift codes the app was told were redeemed.
    redeemed: Vec<String>,
    /// 5xx answers outside the specified ones.
    unexpected: Vec<String>,
}

impl Observed {
    fn count(&mut self, action: &str, outcome: impl Into<String>) {
        *self
            .counts
            .entry((action.to_owned(), outcome.into()))
            .or_default() += 1;
    }
}

/// The 5xx answers the spec and DESIGN.md name: the relay's 502/504, an internal error
/// (envelope B or C), a busy pool (503), and the gift-card credit still pending (502).
fn specified_5xx(status: u16, body: &Value) -> bool {
    let code = body["error"]["code"].as_str();
    match status {
        500 => code == Some("INTERNAL_ERROR") || body["statusCode"] == 500 || body["status"] == 500,
        502 => code == Some("POINT_SERVICE_UNAVAILABLE") || body["statusCode"] == 502,
        503 => code.is_some() || body["statusCode"] == 503 || body["status"] == 503,
        504 => code == Some("POINT_SERVICE_TIMEOUT"),
        _ => false,
    }
}

struct Soak {
    stack: RwLock<Stack>,
    observed: Mutex<Observed>,
    http: reqwest::Client,
    stop: AtomicBool,
    next_code: AtomicU64,
}

impl Soak {
    /// One request; `None` when the service could not be reached at all (it was killed).
    async fn call(
        &self,
        action: &str,
        method: &str,
        url: String,
        token: Option<&str>,
        key: Option<&str>,
        body: Option<&Value>,
    ) -> Option<(u16, Value)> {
        let mut request = self.http.request(method.parse().unwrap(), &url);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        if let Some(key) = key {
            request = request.header("Idempotency-Key", key);
        }
        if let Some(body) = body {
            request = request.json(body);
        }
        let response = match request.send().await {
            Ok(response) => response,
            Err(_) => {
                self.observed.lock().unwrap().count(action, "unreachable");
                return None;
            }
        };
        let status = response.status().as_u16();
        let text = response.text().await.unwrap_or_default();
        let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
        let mut observed = self.observed.lock().unwrap();
        observed.count(action, status.to_string());
        if status >= 500 && !specified_5xx(status, &body) {
            observed
                .unexpected
                .push(format!("{action} {method} {url}: {status} {body}"));
        }
        Some((status, body))
    }

    async fn order_base(&self) -> String {
        self.stack.read().await.order.base.clone()
    }

    /// A client pass: read the balance, the history and the offers, buy with points for a
    /// friend, buy by card (approved or declined), redeem a gift code.
    async fn worker(&self, worker: usize) {
        let mut round = 0usize;
        while !self.stop.load(Ordering::Relaxed) {
            round += 1;
            let (_, token) = CLIENTS[(worker + round) % CLIENTS.len()];
            let (friend, _) = CLIENTS[(worker + round + 1) % CLIENTS.len()];
            let order = self.order_base().await;
            match round % 10 {
                0..=2 => {
                    self.call(
                        "balance",
                        "GET",
                        format!("{order}/api/v2/client/points"),
                        Some(token),
                        None,
                        None,
                    )
                    .await;
                }
                3 => {
                    self.call(
                        "history",
                        "GET",
                        format!("{order}/api/v2/client/point-history?page=1&limit=5"),
                        Some(token),
                        None,
                        None,
                    )
                    .await;
                }
                4 => {
                    self.call(
                        "offers",
                        "GET",
                        format!("{order}/api/v2/client/point-offers"),
                        Some(token),
                        None,
                        None,
                    )
                    .await;
                }
                5 | 6 => {
                    self.point_order(token, friend, &format!("soak-{worker}-{round}"))
                        .await
                }
                7 | 8 => {
                    self.card_order(
                        token,
                        round.is_multiple_of(2),
                        &format!("soak-{worker}-{round}"),
                    )
                    .await
                }
                _ => self.gift_code(token).await,
            }
        }
    }

    /// Retries with the same Idempotency-Key until the order is settled, as the app does.
    async fn point_order(&self, token: &'static str, friend: i64, key: &str) {
        let body =
            json!({"point_offer_id": OFFER, "to_client_id": friend, "payment_type": "point"});
        for _ in 0..20 {
            let order = self.order_base().await;
            let answer = self
                .call(
                    "point order",
                    "POST",
                    format!("{order}/api/v2/client/point-orders"),
                    Some(token),
                    Some(key),
                    Some(&body),
                )
                .await;
            if let Some((200, created)) = answer {
                let id = created["correlation_id"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned();
                let mut observed = self.observed.lock().unwrap();
                if created["status"] == "successful" {
                    observed.successful.push((token, id));
                } else {
                    observed
                        .unexpected
                        .push(format!("point order answered 200 but {created}"));
                }
                return;
            }
            if matches!(answer, Some((status, _)) if (400..500).contains(&status)) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }

    async fn card_order(&self, token: &'static str, approve: bool, key: &str) {
        let body =
            json!({"point_offer_id": OFFER, "to_client_id": 1001, "payment_type": "checkout"});
        let order = self.order_base().await;
        let Some((200, created)) = self
            .call(
                "card order",
                "POST",
                format!("{order}/api/v2/client/point-orders"),
                Some(token),
                Some(key),
                Some(&body),
            )
            .await
        else {
            return;
        };
        let id = created["correlation_id"].as_str().unwrap().to_owned();
        let card = if approve { "card_soak" } else { "decline-soak" };
        let Some((200, started)) = self
            .call(
                "pay card",
                "POST",
                format!("{order}/api/v2/client/point-orders/{id}/pay/card"),
                Some(token),
                None,
                Some(&json!({"id": card, "cvv": "123"})),
            )
            .await
        else {
            return;
        };
        if let Some(page) = started["redirect_url"].as_str() {
            // The sandbox's Approve button; a 502 page means the point service did not take
            // the event, and the payment stays pending (as it would at a real provider).
            let approved = self.http.post(format!("{page}/approve")).send().await;
            let status = approved.map(|r| r.status().as_u16()).unwrap_or(0);
            let mut observed = self.observed.lock().unwrap();
            observed.count("3ds approve", status.to_string());
            if status == 200 {
                observed.approved.push((token, id));
            }
        }
    }

    /// A code of its own each time; a pending credit is retried by the same client.
    async fn gift_code(&self, token: &'static str) {
        let n = self.next_code.fetch_add(1, Ordering::Relaxed) as usize;
        if n >= GIFT_CODES {
            return;
        }
        let code = format!("SOAK-{n:05}");
        for _ in 0..20 {
            let order = self.order_base().await;
            let answer = self
                .call(
                    "gift code",
                    "POST",
                    format!("{order}/api/v2/client/gift-card-code"),
                    Some(token),
                    None,
                    Some(&json!({"code": code})),
                )
                .await;
            match answer {
                Some((200, _)) => {
                    self.observed.lock().unwrap().redeemed.push(code);
                    return;
                }
                Some((status, _)) if (400..500).contains(&status) && status != 429 => return,
                _ => tokio::time::sleep(Duration::from_millis(500)).await,
            }
        }
    }

    /// Kills and restarts one part every `period`, in turn: the point service, the order
    /// service, PostgreSQL.
    async fn chaos(&self, cluster: &LocalCluster, period: Duration) -> BTreeMap<&'static str, u64> {
        let mut done = BTreeMap::new();
        let mut turn = 0;
        loop {
            tokio::time::sleep(period).await;
            if self.stop.load(Ordering::Relaxed) {
                return done;
            }
            let victim = ["point-service", "order-service", "postgresql"][turn % 3];
            turn += 1;
            match victim {
                "point-service" => {
                    self.stack.read().await.points.crash();
                    tokio::time::sleep(Duration::from_secs(2)).await;
                    self.stack.write().await.start_points_again().await;
                }
                "order-service" => {
                    self.stack.read().await.order.crash();
                    tokio::time::sleep(Duration::from_secs(2)).await;
                    self.stack.write().await.start_order_again().await;
                }
                _ => {
                    cluster.kill();
                    tokio::time::sleep(Duration::from_secs(3)).await;
                    cluster.up();
                }
            }
            *done.entry(victim).or_default() += 1;
            eprintln!("soak: killed and restarted {victim}");
        }
    }
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let seconds: u64 = std::env::var("SOAK_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(600);
    let workers: usize = std::env::var("SOAK_WORKERS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(8);

    eprintln!("soak: starting a PostgreSQL cluster of its own and the system");
    let cluster = LocalCluster::start();
    let admin = cluster.admin_url();
    let databases = Databases {
        auth: create_database(&admin, "auth").await,
        points: create_database(&admin, "points").await,
        catalog: create_database(&admin, "catalog").await,
    };
    migrate_and_seed(&["auth-service"], &databases.auth).await;
    migrate_and_seed(&["point-service"], &databases.points).await;
    migrate_and_seed(&["order-service", "operator-service"], &databases.catalog).await;
    prepare(&databases).await;

    let soak = Arc::new(Soak {
        stack: RwLock::new(Stack::start(&databases).await),
        observed: Mutex::default(),
        http: reqwest::Client::builder()
            .timeout(Duration::from_secs(30))
            .build()
            .unwrap(),
        stop: AtomicBool::new(false),
        next_code: AtomicU64::new(0),
    });

    eprintln!("soak: {workers} clients for {seconds} s, with a kill every 15 s");
    let started = Instant::now();
    let clients: Vec<_> = (0..workers)
        .map(|w| {
            let soak = soak.clone();
            tokio::spawn(async move { soak.worker(w).await })
        })
        .collect();
    let stopper = {
        let soak = soak.clone();
        async move {
            tokio::time::sleep(Duration::from_secs(seconds)).await;
            soak.stop.store(true, Ordering::Relaxed);
        }
    };
    let (kills, ()) = tokio::join!(soak.chaos(&cluster, Duration::from_secs(15)), stopper);
    for client in clients {
        client.await.unwrap();
    }
    let load_time = started.elapsed();

    eprintln!("soak: load stopped; checking");
    let failures = verify(&soak, &databases).await;
    report(&soak.observed.lock().unwrap(), &kills, load_time, &failures);
    if failures.is_empty() {
        std::process::ExitCode::SUCCESS
    } else {
        std::process::ExitCode::FAILURE
    }
}

/// Money to spend and gift codes to redeem, beyond the demo data.
async fn prepare(databases: &Databases) {
    use diesel_async::{AsyncConnection, AsyncPgConnection, SimpleAsyncConnection};
    let ids = CLIENTS
        .iter()
        .map(|(id, _)| id.to_string())
        .collect::<Vec<_>>()
        .join(",");
    let mut points = AsyncPgConnection::establish(&databases.points)
        .await
        .unwrap();
    points
        .batch_execute(&format!(
            "BEGIN;
             INSERT INTO point_accounts (client_id) SELECT unnest(ARRAY[{ids}]) ON CONFLICT DO NOTHING;
             INSERT INTO point_entries (client_id, kind, points) SELECT unnest(ARRAY[{ids}]), 'adjustment', 10000000;
             UPDATE point_accounts SET balance = balance + 10000000 WHERE client_id IN ({ids});
             COMMIT;"
        ))
        .await
        .unwrap();
    let mut catalog = AsyncPgConnection::establish(&databases.catalog)
        .await
        .unwrap();
    catalog
        .batch_execute(&format!(
            "INSERT INTO gift_card_codes (code, points, active)
             SELECT 'SOAK-' || lpad(g::text, 5, '0'), 10, true FROM generate_series(0, {}) g",
            GIFT_CODES - 1
        ))
        .await
        .unwrap();
}

/// Everything up again, then the checks; returns what failed.
async fn verify(soak: &Soak, databases: &Databases) -> Vec<String> {
    let mut failures = Vec::new();
    let stack = soak.stack.read().await;
    for service in [&stack.auth, &stack.points, &stack.order, &stack.operator] {
        service
            .wait_until(Duration::from_secs(60), |s| s == 200, "/readyz")
            .await;
    }
    let (successful, approved, redeemed, unexpected) = {
        let observed = soak.observed.lock().unwrap();
        (
            observed.successful.clone(),
            observed.approved.clone(),
            observed.redeemed.clone(),
            observed.unexpected.clone(),
        )
    };

    let orders = format!("{}/api/v2/client/point-orders", stack.order.base);
    for (token, id) in &successful {
        let (status, order) = stack
            .call("GET", &format!("{orders}/{id}"), Some(token), &[], None)
            .await;
        if status != 200 || order["status"] != "successful" {
            failures.push(format!(
                "point order {id} was answered successful, now: {status} {order}"
            ));
        }
    }
    // A capture the point service took is applied in the same transaction, so it is final.
    for (token, id) in &approved {
        let (status, order) = stack
            .call("GET", &format!("{orders}/{id}"), Some(token), &[], None)
            .await;
        if status != 200 || order["status"] != "successful" {
            failures.push(format!(
                "card order {id} was approved, now: {status} {order}"
            ));
        }
    }
    {
        use diesel::sql_types::{BigInt, Text};
        use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
        #[derive(diesel::QueryableByName)]
        struct N {
            #[diesel(sql_type = BigInt)]
            n: i64,
        }
        let mut catalog = AsyncPgConnection::establish(&databases.catalog)
            .await
            .unwrap();
        for code in &redeemed {
            let n: N = diesel::sql_query("SELECT count(*) AS n FROM gift_card_redemptions WHERE code = $1 AND status = 'credited'")
                .bind::<Text, _>(code)
                .get_result(&mut catalog)
                .await
                .unwrap();
            if n.n != 1 {
                failures.push(format!(
                    "gift code {code} was answered redeemed but is not credited"
                ));
            }
        }
    }
    for line in unexpected.iter().take(20) {
        failures.push(format!("unspecified 5xx: {line}"));
    }
    let audit = run("point-service", &["audit"], &databases.points, &[]).await;
    if !audit.status.success() {
        failures.push(format!(
            "point-service audit failed: {}{}",
            String::from_utf8_lossy(&audit.stdout),
            String::from_utf8_lossy(&audit.stderr)
        ));
    }
    failures
}

fn report(
    observed: &Observed,
    kills: &BTreeMap<&'static str, u64>,
    load_time: Duration,
    failures: &[String],
) {
    println!("## Soak: {} s of load", load_time.as_secs());
    println!();
    println!("| Action | Outcome | Count |");
    println!("|---|---|---|");
    for ((action, outcome), count) in &observed.counts {
        println!("| {action} | {outcome} | {count} |");
    }
    println!();
    for (victim, n) in kills {
        println!("- {victim} killed and restarted {n} times");
    }
    println!(
        "- point orders answered successful: {} (all verified)",
        observed.successful.len()
    );
    println!("- card orders approved: {}", observed.approved.len());
    println!("- gift codes redeemed: {}", observed.redeemed.len());
    println!("- unspecified 5xx answers: {}", observed.unexpected.len());
    if failures.is_empty() {
        println!("- audit: passed; every check above held");
    } else {
        println!();
        println!("FAILED:");
        for failure in failures {
            println!("- {failure}");
        }
    }
}
