//! `make soak`: the whole system under a mixed load while the point service, the order
//! service and PostgreSQL are killed and restarted under it, on loopback and a PostgreSQL
//! cluster of its own. The mix has the money paths' awkward cases too: double-tap card
//! payments whose older attempt is declined, a capture arriving after the decline that failed
//! its order, duplicate and reordered webhook events, and one gift code redeemed by every
//! client at once. Afterwards: `point-service audit` passes, every order the clients were told
//! succeeded exists as successful and was credited once, every capture that could not be
//! applied is listed by `point-service unapplied-captures` (and nothing else is), every gift
//! code was credited exactly once with none left pending and at most one 200, and every 5xx the
//! clients saw is one the specification or docs/design.md names. Prints the counts; exits 1 on any
//! failure.
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
/// Codes that every client redeems at once (one 200 at most, one credit exactly).
const RUSH_CODES: usize = 4000;
/// The order service's gift-card retry task, quick enough that what the kills left pending
/// drains within the checks' wait (lease + longest backoff + interval, well under 180 s).
const ORDER_ENV: [(&str, &str); 3] = [
    ("GIFT_CARD_RETRY_INTERVAL_MS", "1000"),
    ("GIFT_CARD_RETRY_MAX_BACKOFF_SECONDS", "20"),
    ("GIFT_CARD_CREDIT_LEASE_SECONDS", "15"),
];

/// A card payment waiting on its 3-D Secure page.
struct Payment {
    id: String,
    page: String,
}

/// A checkout order paid twice by card: the order as created, its id, and both payments.
struct Tapped {
    created: Value,
    id: String,
    older: Payment,
    newer: Payment,
}

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
    /// Card orders that must be credited exactly once: (payer token, correlation id).
    credited_once: Vec<(&'static str, String)>,
    /// Captures the point service could not apply because a decline had failed the order:
    /// (payer token, correlation id, payment id). Each must be listed for a refund.
    unapplied: Vec<(&'static str, String, String)>,
    /// Rush codes: how many 200s each got across all clients.
    rush: BTreeMap<String, u64>,
    /// Every order of the capture-after-decline flow, whatever its buttons answered: a press
    /// whose answer was lost (a kill) may still have been applied.
    late_capture_orders: Vec<String>,
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

/// The 5xx answers the spec and docs/design.md name: the relay's 502/504, an internal error
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
    next_rush: AtomicU64,
    next_event: AtomicU64,
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
            match round % 14 {
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
                9 => self.gift_code(token).await,
                10 => {
                    self.double_tap(token, &format!("soak-{worker}-{round}"))
                        .await
                }
                11 => {
                    self.capture_after_decline(token, &format!("soak-{worker}-{round}"))
                        .await
                }
                12 => {
                    self.duplicate_and_reordered_events(token, &format!("soak-{worker}-{round}"))
                        .await
                }
                _ => self.rush().await,
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
        let Some(created) = self.checkout(token, key).await else {
            return;
        };
        let id = created["correlation_id"].as_str().unwrap().to_owned();
        let card = if approve { "card_soak" } else { "decline-soak" };
        let Some(started) = self.pay("pay card", token, &id, card).await else {
            return;
        };
        // A `decline` card has no page: the sandbox declines it by webhook on its own. The
        // Approve button's 502 means the point service did not take the event, and the
        // payment stays pending (as it would at a real provider).
        if let Some(page) = started["redirect_url"].as_str()
            && self.press("3ds approve", page, "approve").await
        {
            self.observed.lock().unwrap().approved.push((token, id));
        }
    }

    /// A code of its own each time; a pending credit is retried by the same client.
    async fn gift_code(&self, token: &'static str) {
        let n = self.next_code.fetch_add(1, Ordering::Relaxed) as usize;
        if n >= GIFT_CODES {
            return;
        }
        let code = format!("SOAK-{n:05}");
        if self.redeem("gift code", token, &code).await {
            self.observed.lock().unwrap().redeemed.push(code);
        }
    }

    /// Redeems `code` as the app does, retrying a 5xx or a 429 (a credit still pending, a
    /// service down); true when it answered 200.
    async fn redeem(&self, action: &str, token: &'static str, code: &str) -> bool {
        for _ in 0..20 {
            let order = self.order_base().await;
            let answer = self
                .call(
                    action,
                    "POST",
                    format!("{order}/api/v2/client/gift-card-code"),
                    Some(token),
                    None,
                    Some(&json!({"code": code})),
                )
                .await;
            match answer {
                Some((200, _)) => return true,
                Some((status, _)) if (400..500).contains(&status) && status != 429 => return false,
                _ => tokio::time::sleep(Duration::from_millis(500)).await,
            }
        }
        false
    }

    /// A checkout order for a friend (Sara), or `None` when it could not be made.
    async fn checkout(&self, token: &'static str, key: &str) -> Option<Value> {
        let body =
            json!({"point_offer_id": OFFER, "to_client_id": 1001, "payment_type": "checkout"});
        let order = self.order_base().await;
        match self
            .call(
                "card order",
                "POST",
                format!("{order}/api/v2/client/point-orders"),
                Some(token),
                Some(key),
                Some(&body),
            )
            .await
        {
            Some((200, created)) => Some(created),
            _ => None,
        }
    }

    /// A card pay of `id` with `card`: the payment service's answer, when it was a 200.
    async fn pay(&self, action: &str, token: &'static str, id: &str, card: &str) -> Option<Value> {
        let order = self.order_base().await;
        match self
            .call(
                action,
                "POST",
                format!("{order}/api/v2/client/point-orders/{id}/pay/card"),
                Some(token),
                None,
                Some(&json!({"id": card, "cvv": "123"})),
            )
            .await?
        {
            (200, started) => Some(started),
            _ => None,
        }
    }

    /// A checkout order paid twice by card (a double tap), each payment waiting on its 3-D
    /// Secure page; `None` when a step did not answer 200.
    async fn tapped_twice(&self, action: &str, token: &'static str, key: &str) -> Option<Tapped> {
        let created = self.checkout(token, key).await?;
        let id = created["correlation_id"].as_str()?.to_owned();
        let mut payments = Vec::with_capacity(2);
        for _ in 0..2 {
            let started = self.pay(action, token, &id, "card_soak").await?;
            payments.push(Payment {
                id: started["id"].as_str()?.to_owned(),
                page: started["redirect_url"].as_str()?.to_owned(),
            });
        }
        let newer = payments.pop()?;
        let older = payments.pop()?;
        Some(Tapped {
            created,
            id,
            older,
            newer,
        })
    }

    /// Presses a 3-D Secure button; true when the point service took the event.
    async fn press(&self, action: &str, page: &str, button: &str) -> bool {
        let pressed = self.http.post(format!("{page}/{button}")).send().await;
        let status = pressed.map(|r| r.status().as_u16()).unwrap_or(0);
        self.observed
            .lock()
            .unwrap()
            .count(action, status.to_string());
        status == 200
    }

    /// A double tap: two card pays on one order; the older payment is declined, then the
    /// newer approved. The order is paid by the newer one, once.
    async fn double_tap(&self, token: &'static str, key: &str) {
        let Some(Tapped {
            id, older, newer, ..
        }) = self.tapped_twice("double tap pay", token, key).await
        else {
            return;
        };
        // Whether or not the older decline got through, the newer capture pays the order.
        self.press("double tap decline older", &older.page, "decline")
            .await;
        if self
            .press("double tap approve newer", &newer.page, "approve")
            .await
        {
            let mut observed = self.observed.lock().unwrap();
            observed.approved.push((token, id.clone()));
            observed.credited_once.push((token, id));
        }
    }

    /// Two card pays; the newer payment is declined (the order fails), then the older one is
    /// captured: money taken that can no longer be turned into points, so it must be listed.
    async fn capture_after_decline(&self, token: &'static str, key: &str) {
        let Some(Tapped {
            id, older, newer, ..
        }) = self.tapped_twice("late capture pay", token, key).await
        else {
            return;
        };
        self.observed
            .lock()
            .unwrap()
            .late_capture_orders
            .push(id.clone());
        if !self
            .press("late capture decline newer", &newer.page, "decline")
            .await
        {
            return;
        }
        if self
            .press("late capture approve older", &older.page, "approve")
            .await
        {
            self.observed
                .lock()
                .unwrap()
                .unapplied
                .push((token, id, older.id));
        }
    }

    /// Signs and sends one webhook event straight to the point service; its status.
    async fn send_event(&self, event: &Value) -> Option<u16> {
        let body = event.to_string();
        let signature = testkit::tokens::webhook_signature(
            e2e::dev("PAYMENT_WEBHOOK_SECRET"),
            testkit::tokens::now(),
            &body,
        );
        let points = self.stack.read().await.points.base.clone();
        let sent = self
            .http
            .post(format!("{points}/webhooks/v1/payments"))
            .header("content-type", "application/json")
            .header("x-signature", signature)
            .body(body)
            .send()
            .await;
        let status = sent.map(|r| r.status().as_u16()).ok();
        self.observed.lock().unwrap().count(
            "webhook event",
            status.map_or("unreachable".to_owned(), |s| s.to_string()),
        );
        status
    }

    /// Sends `event` until the point service answers it (it may be down for a while).
    async fn deliver(&self, event: &Value) -> bool {
        for _ in 0..40 {
            if self.stop.load(Ordering::Relaxed) {
                return false;
            }
            match self.send_event(event).await {
                Some(200) => return true,
                Some(status) if (400..500).contains(&status) => return false,
                _ => tokio::time::sleep(Duration::from_millis(250)).await,
            }
        }
        false
    }

    /// What a real gateway does on a bad day: the newer payment's capture twice under one
    /// event id and once more under another, then the older payment's decline after it.
    /// The order is credited once and nothing is listed (no payment was taken twice).
    async fn duplicate_and_reordered_events(&self, token: &'static str, key: &str) {
        let Some(Tapped {
            created,
            id,
            older,
            newer,
        }) = self.tapped_twice("events pay", token, key).await
        else {
            return;
        };
        let amount_minor = minor_units(&created["money_amount"]);
        let n = self.next_event.fetch_add(1, Ordering::Relaxed);
        let event = |event_id: String, kind: &str, payment: &str| {
            json!({"id": event_id, "type": kind, "data": {
                "reference": id, "payment_id": payment, "provider": "soak",
                "amount_minor": amount_minor, "currency": "SAR"}})
        };
        let capture = event(
            format!("soak-evt-{n}-capture"),
            "payment_captured",
            &newer.id,
        );
        if !self.deliver(&capture).await {
            return;
        }
        self.deliver(&capture).await;
        self.deliver(&event(
            format!("soak-evt-{n}-capture-again"),
            "payment_captured",
            &newer.id,
        ))
        .await;
        self.deliver(&event(
            format!("soak-evt-{n}-decline"),
            "payment_declined",
            &older.id,
        ))
        .await;
        let mut observed = self.observed.lock().unwrap();
        observed.approved.push((token, id.clone()));
        observed.credited_once.push((token, id));
    }

    /// One new code redeemed by every client at the same moment; each retries a 5xx (a
    /// credit still pending) as the app does. At most one of them may ever get a 200.
    async fn rush(&self) {
        let n = self.next_rush.fetch_add(1, Ordering::Relaxed) as usize;
        if n >= RUSH_CODES {
            return;
        }
        let code = format!("RUSH-{n:04}");
        let tries = CLIENTS.map(|(_, token)| self.redeem("rush code", token, &code));
        let wins = futures_util::future::join_all(tries)
            .await
            .into_iter()
            .filter(|won| *won)
            .count() as u64;
        self.observed.lock().unwrap().rush.insert(code, wins);
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
        stack: RwLock::new(Stack::start_with_order_env(&databases, &ORDER_ENV).await),
        observed: Mutex::default(),
        http: reqwest::Client::builder()
            .timeout(Duration::from_secs(30))
            .build()
            .unwrap(),
        stop: AtomicBool::new(false),
        next_code: AtomicU64::new(0),
        next_rush: AtomicU64::new(0),
        next_event: AtomicU64::new(0),
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

/// An order's `money_amount` ("15.00") in halalas, as the payment service sends it.
fn minor_units(money_amount: &Value) -> i64 {
    let money: domain::Money = money_amount.as_str().unwrap().parse().unwrap();
    money.minor_units().unwrap()
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
    catalog
        .batch_execute(&format!(
            "INSERT INTO gift_card_codes (code, points, active)
             SELECT 'RUSH-' || lpad(g::text, 4, '0'), 7.25, true FROM generate_series(0, {}) g",
            RUSH_CODES - 1
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
    failures.extend(check_gift_codes(soak, databases).await);
    failures.extend(check_card_orders(soak, databases).await);
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

#[derive(diesel::QueryableByName)]
struct Count {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    n: i64,
}

#[derive(diesel::QueryableByName)]
struct Text {
    #[diesel(sql_type = diesel::sql_types::Text)]
    text: String,
}

async fn connect(url: &str) -> diesel_async::AsyncPgConnection {
    use diesel_async::AsyncConnection;
    diesel_async::AsyncPgConnection::establish(url)
        .await
        .unwrap()
}

/// Every redemption credited exactly once (the retry task drains what the kills left
/// pending), none pending, and no rush code answered 200 more than once.
async fn check_gift_codes(soak: &Soak, databases: &Databases) -> Vec<String> {
    use diesel_async::RunQueryDsl;
    let mut failures = Vec::new();
    let mut catalog = connect(&databases.catalog).await;
    let deadline = Instant::now() + Duration::from_secs(180);
    let pending = loop {
        let pending: Count = diesel::sql_query(
            "SELECT count(*) AS n FROM gift_card_redemptions WHERE status = 'pending'",
        )
        .get_result(&mut catalog)
        .await
        .unwrap();
        if pending.n == 0 || Instant::now() > deadline {
            break pending.n;
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    };
    if pending > 0 {
        failures.push(format!(
            "{pending} gift-code redemptions still pending 180 s after the load"
        ));
    }
    let redemptions: Vec<Text> = diesel::sql_query(
        "SELECT 'gift-card:' || id AS text FROM gift_card_redemptions WHERE status = 'credited'",
    )
    .load(&mut catalog)
    .await
    .unwrap();
    let mut points = connect(&databases.points).await;
    let credits: Vec<Text> = diesel::sql_query(
        "SELECT reference AS text FROM internal_credits WHERE reference LIKE 'gift-card:%'",
    )
    .load(&mut points)
    .await
    .unwrap();
    let redeemed: std::collections::BTreeSet<_> = redemptions.into_iter().map(|r| r.text).collect();
    let credited: std::collections::BTreeSet<_> = credits.into_iter().map(|r| r.text).collect();
    for missing in redeemed.difference(&credited).take(20) {
        failures.push(format!(
            "redemption {missing} is marked credited but the point service has no credit"
        ));
    }
    for extra in credited.difference(&redeemed).take(20) {
        failures.push(format!("credit {extra} names no credited redemption"));
    }
    let entries: Count = diesel::sql_query(
        "SELECT count(*) AS n FROM point_entries WHERE reference LIKE 'gift-card:%'",
    )
    .get_result(&mut points)
    .await
    .unwrap();
    if entries.n as usize != credited.len() {
        failures.push(format!(
            "{} gift-card ledger entries for {} credits: a code was credited twice",
            entries.n,
            credited.len()
        ));
    }
    let observed = soak.observed.lock().unwrap();
    for (code, wins) in &observed.rush {
        if *wins > 1 {
            failures.push(format!("rush code {code} answered 200 {wins} times"));
        }
    }
    failures
}

/// Card orders paid through the awkward paths were credited once, and every capture that
/// could not be applied is listed by `point-service unapplied-captures`, with no listed
/// capture left unexplained.
async fn check_card_orders(soak: &Soak, databases: &Databases) -> Vec<String> {
    use diesel::sql_types::Uuid as SqlUuid;
    use diesel_async::RunQueryDsl;
    let mut failures = Vec::new();
    let (credited_once, unapplied, late_orders) = {
        let observed = soak.observed.lock().unwrap();
        (
            observed.credited_once.clone(),
            observed.unapplied.clone(),
            observed.late_capture_orders.clone(),
        )
    };
    let mut points = connect(&databases.points).await;
    for (_, id) in &credited_once {
        let entries: Count = diesel::sql_query(
            "SELECT count(*) AS n FROM point_entries WHERE order_correlation_id = $1",
        )
        .bind::<SqlUuid, _>(id.parse::<uuid::Uuid>().unwrap())
        .get_result(&mut points)
        .await
        .unwrap();
        if entries.n != 1 {
            failures.push(format!(
                "card order {id} has {} ledger entries, not 1",
                entries.n
            ));
        }
    }
    let listed = run(
        "point-service",
        &["unapplied-captures"],
        &databases.points,
        &[],
    )
    .await;
    let listing = String::from_utf8_lossy(&listed.stdout).into_owned();
    if !listed.status.success() {
        failures.push(format!(
            "point-service unapplied-captures failed: {}",
            String::from_utf8_lossy(&listed.stderr)
        ));
    }
    let stack = soak.stack.read().await;
    let orders = format!("{}/api/v2/client/point-orders", stack.order.base);
    for (token, id, payment) in &unapplied {
        if !listing
            .lines()
            .any(|l| l.contains(id.as_str()) && l.contains(payment.as_str()))
        {
            failures.push(format!(
                "the capture of {payment} (order {id}) after its decline is not listed"
            ));
        }
        let (_, order) = stack
            .call("GET", &format!("{orders}/{id}"), Some(token), &[], None)
            .await;
        if order["status"] != "payment_failed" {
            failures.push(format!(
                "order {id} declined then captured is now {}",
                order["status"]
            ));
        }
    }
    // A header, one tab-separated line per open capture, then "<n> open".
    for line in listing.lines().skip(1).filter(|l| l.contains('\t')) {
        let order = line.split('\t').nth(1).unwrap_or_default();
        if !late_orders.iter().any(|id| id == order) {
            failures.push(format!("unexplained unapplied capture: {line}"));
        }
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
    println!(
        "- rush codes (every client at once): {}, answered 200 once: {}, never (credited by the retry task or a 5xx retry): {}",
        observed.rush.len(),
        observed.rush.values().filter(|w| **w == 1).count(),
        observed.rush.values().filter(|w| **w == 0).count()
    );
    println!(
        "- card orders paid through a double tap or duplicate/reordered events, credited once: {}",
        observed.credited_once.len()
    );
    println!(
        "- captures after a decline, listed for refund: {}",
        observed.unapplied.len()
    );
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
