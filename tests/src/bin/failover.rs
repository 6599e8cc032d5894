//! `make failover`: the services on a PostgreSQL primary with a synchronous streaming standby
//! (two project-local clusters on ports of their own), connected with a multi-host
//! `DATABASE_URL` (`target_session_attrs=read-write`), under a load of point orders and gift
//! codes; then the primary is killed (immediate shutdown, as a crash) and the standby
//! promoted. Reports the seconds until writes succeed again, and checks that every order
//! acknowledged before the kill (and after it) exists on the new primary, that every answer
//! during the gap was one the specification names, that nothing was left half-written (the
//! ledger audit, no gift code left pending) and that every gift code credited is credited
//! once. Prints the figures; exits 1 on any failure.
//!
//! `FAILOVER_MODE`: `kill` (the default: an immediate shutdown, the server's connections
//! reset) or `freeze` (SIGSTOP to every process of the primary: its kernel keeps accepting
//! and acknowledging, nothing answers, as with a hung host; the services must give up on it
//! by their own deadlines, `db::connect`). `FAILOVER_WARMUP_SECONDS` (default 20) of load
//! before the kill, `FAILOVER_AFTER_SECONDS` (default 20) after the writes are back;
//! `FAILOVER_WORKERS` (default 6) clients; `FAILOVER_PROMOTE_DELAY_SECONDS` (default 0)
//! between the kill and the promotion, the time a failover manager (Patroni, a cloud's
//! managed failover) takes to notice.
//!
//! `FAILOVER_MODE=standby-lost` stops the synchronous standby instead (the primary stays):
//! every commit then waits for a standby that is gone (`statement_timeout` does not cover
//! that wait), for `FAILOVER_STANDBY_DOWN_SECONDS` (default 30), after which the standby is
//! started again and catches up. Reports what the clients were answered meanwhile and when
//! writes succeeded again (docs/scaling.md, "A synchronous standby lost").
//!
//! "Nothing half-written" is the point service's audit (an order's entries exist exactly
//! when it is successful, every credit once, every balance the sum of its entries) and the
//! gift-code checks below.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test driver fails loudly on purpose

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use e2e::money::{self, CLIENTS};
use e2e::stack::{Databases, Stack};
use e2e::{LocalCluster, create_database, free_port, migrate_and_seed, repo_root, run};
use serde_json::{Value, json};

const GIFT_CODES: usize = 5000;
/// The order service's gift-card retry task, quick enough that redemptions whose credit
/// failed in the gap are credited before the checks.
const ORDER_ENV: [(&str, &str); 3] = [
    ("GIFT_CARD_RETRY_INTERVAL_MS", "500"),
    ("GIFT_CARD_RETRY_MAX_BACKOFF_SECONDS", "5"),
    ("GIFT_CARD_CREDIT_LEASE_SECONDS", "15"),
];

/// The standby: a base backup of the primary, streaming from it, synchronous.
struct Standby {
    dir: PathBuf,
    port: u16,
}

impl Standby {
    /// Stops it the hard way (the standby's host is lost).
    fn stop(&self) {
        let output = std::process::Command::new(repo_root().join("scripts/postgres.sh"))
            .args(["stop-local", self.dir.to_str().unwrap(), "immediate"])
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }

    /// Starts it again on its port: still a standby (its standby.signal), it reconnects to
    /// the primary and catches up.
    fn restart(&self) {
        let output = std::process::Command::new(repo_root().join("scripts/postgres.sh"))
            .args([
                "start-local",
                self.dir.to_str().unwrap(),
                &self.port.to_string(),
            ])
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }

    fn start(primary_port: u16) -> Standby {
        let standby = Standby {
            dir: std::env::temp_dir().join(format!(
                "loyalty-failover-standby-{}",
                uuid::Uuid::new_v4().simple()
            )),
            port: free_port(),
        };
        standby.script(&[
            "start",
            &primary_port.to_string(),
            standby.dir.to_str().unwrap(),
            &standby.port.to_string(),
        ]);
        standby
    }

    fn promote(&self) {
        self.script(&["promote", self.dir.to_str().unwrap()]);
    }

    fn script(&self, args: &[&str]) {
        let output = std::process::Command::new(repo_root().join("scripts/pg-standby.sh"))
            .args(args)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "scripts/pg-standby.sh {args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

impl Drop for Standby {
    fn drop(&mut self) {
        let _ = std::process::Command::new(repo_root().join("scripts/postgres.sh"))
            .args(["stop-local", self.dir.to_str().unwrap(), "immediate"])
            .output();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Kill,
    Freeze,
    StandbyLost,
}

impl Mode {
    fn what(self) -> &'static str {
        match self {
            Mode::Kill => "primary killed (immediate shutdown)",
            Mode::Freeze => "primary frozen (SIGSTOP)",
            Mode::StandbyLost => "synchronous standby lost",
        }
    }
}

/// One answer the clients got: when it was sent, when it came, what it was.
struct Answer {
    action: &'static str,
    sent: Instant,
    came: Instant,
    status: u16,
    code: String,
}

#[derive(Default)]
struct Observed {
    answers: Vec<Answer>,
    /// Point orders answered 200: (payer token, correlation id, when the answer came).
    orders: Vec<(&'static str, String, Instant)>,
    /// Gift codes answered 200.
    redeemed: Vec<String>,
}

struct Load {
    http: reqwest::Client,
    order: String,
    observed: Mutex<Observed>,
    stop: AtomicBool,
    next_code: AtomicU64,
}

impl Load {
    /// One request to the order service; status 0 when it could not be reached.
    async fn request(
        &self,
        path: &str,
        token: &str,
        key: Option<&str>,
        body: &Value,
    ) -> (u16, Value) {
        let mut request = self
            .http
            .post(format!("{}{path}", self.order))
            .bearer_auth(token)
            .json(body);
        if let Some(key) = key {
            request = request.header("Idempotency-Key", key);
        }
        let Ok(response) = request.send().await else {
            return (0, Value::Null);
        };
        let status = response.status().as_u16();
        let text = response.text().await.unwrap_or_default();
        (
            status,
            serde_json::from_str(&text).unwrap_or(Value::String(text)),
        )
    }

    fn record(&self, action: &'static str, sent: Instant, status: u16, body: &Value) {
        // Envelope B's code, or envelope C's status (the order service's own routes).
        let code = match (body["error"]["code"].as_str(), &body["statusCode"]) {
            (Some(code), _) => code.to_owned(),
            (None, Value::Number(n)) => format!("statusCode {n}"),
            _ => String::new(),
        };
        self.observed.lock().unwrap().answers.push(Answer {
            action,
            sent,
            came: Instant::now(),
            status,
            code,
        });
    }

    /// A client: point orders for a friend (the same Idempotency-Key until the order is
    /// answered, as the app retries), every third round a gift code.
    async fn worker(&self, worker: usize) {
        let mut round = 0usize;
        while !self.stop.load(Ordering::Relaxed) {
            round += 1;
            let (_, token) = CLIENTS[(worker + round) % CLIENTS.len()];
            let (friend, _) = CLIENTS[(worker + round + 1) % CLIENTS.len()];
            let key = format!("failover-{worker}-{round}");
            loop {
                let sent = Instant::now();
                let order = json!({"point_offer_id": money::OFFER, "to_client_id": friend, "payment_type": "point"});
                let (status, body) = self
                    .request("/api/v2/client/point-orders", token, Some(&key), &order)
                    .await;
                self.record("point order", sent, status, &body);
                if status == 200 {
                    let id = body["correlation_id"]
                        .as_str()
                        .unwrap_or_default()
                        .to_owned();
                    self.observed
                        .lock()
                        .unwrap()
                        .orders
                        .push((token, id, Instant::now()));
                    break;
                }
                if (400..500).contains(&status) && status != 429 {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            if round.is_multiple_of(3) {
                let n = self.next_code.fetch_add(1, Ordering::Relaxed) as usize;
                if n < GIFT_CODES {
                    let code = format!("FO-{n:04}");
                    for _ in 0..600 {
                        let sent = Instant::now();
                        let (status, body) = self
                            .request(
                                "/api/v2/client/gift-card-code",
                                token,
                                None,
                                &json!({"code": code}),
                            )
                            .await;
                        self.record("gift code", sent, status, &body);
                        if status == 200 {
                            self.observed.lock().unwrap().redeemed.push(code.clone());
                        }
                        if status < 500 && status != 429 {
                            break;
                        }
                        tokio::time::sleep(Duration::from_millis(100)).await;
                    }
                }
            }
        }
    }
}

fn seconds(name: &str, default: u64) -> Duration {
    Duration::from_secs(
        std::env::var(name)
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(default),
    )
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let mode = match std::env::var("FAILOVER_MODE").as_deref() {
        Ok("kill") | Err(_) => Mode::Kill,
        Ok("freeze") => Mode::Freeze,
        Ok("standby-lost") => Mode::StandbyLost,
        Ok(other) => panic!("FAILOVER_MODE={other:?}: expected kill, freeze or standby-lost"),
    };
    let standby_down = seconds("FAILOVER_STANDBY_DOWN_SECONDS", 30);
    let warmup = seconds("FAILOVER_WARMUP_SECONDS", 20);
    let promote_delay = seconds("FAILOVER_PROMOTE_DELAY_SECONDS", 0);
    let after = seconds("FAILOVER_AFTER_SECONDS", 20);
    let workers: usize = std::env::var("FAILOVER_WORKERS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(6);

    eprintln!("failover: a primary, its databases and a synchronous standby");
    let primary = LocalCluster::start();
    let admin = primary.admin_url();
    let direct = Databases {
        auth: create_database(&admin, "auth").await,
        points: create_database(&admin, "points").await,
        catalog: create_database(&admin, "catalog").await,
    };
    migrate_and_seed(&["auth-service"], &direct.auth).await;
    migrate_and_seed(&["point-service"], &direct.points).await;
    migrate_and_seed(&["order-service", "operator-service"], &direct.catalog).await;
    money::fund(&direct.points, 10_000_000).await;
    money::add_gift_codes(&direct.catalog, "FO", GIFT_CODES, "10").await;
    let standby = Standby::start(primary.port);
    make_synchronous(&admin).await;

    let url = |database: &str| {
        format!(
            "postgres://postgres@127.0.0.1:{},127.0.0.1:{}/{database}?target_session_attrs=read-write",
            primary.port, standby.port
        )
    };
    let databases = Databases {
        auth: url("auth"),
        points: url("points"),
        catalog: url("catalog"),
    };
    let stack = Stack::start_with(&databases, &[], &ORDER_ENV).await;
    let load = Arc::new(Load {
        http: reqwest::Client::builder()
            .timeout(Duration::from_secs(30))
            .build()
            .unwrap(),
        order: stack.order.base.clone(),
        observed: Mutex::default(),
        stop: AtomicBool::new(false),
        next_code: AtomicU64::new(0),
    });
    let clients: Vec<_> = (0..workers)
        .map(|w| {
            let load = load.clone();
            tokio::spawn(async move { load.worker(w).await })
        })
        .collect();

    eprintln!(
        "failover: {workers} clients for {} s, then the {}",
        warmup.as_secs(),
        mode.what()
    );
    tokio::time::sleep(warmup).await;
    // The event is done when the call returns (`pg_ctl stop -m immediate` takes a few hundred
    // milliseconds, during which the old primary may still commit): what was sent from then
    // on measures the gap.
    let (killed, promoted) = match mode {
        Mode::Kill | Mode::Freeze => {
            if mode == Mode::Freeze {
                primary.freeze();
            } else {
                primary.kill();
            }
            let killed = Instant::now();
            tokio::time::sleep(promote_delay).await;
            let promote_started = Instant::now();
            standby.promote();
            let promoted = Instant::now();
            eprintln!(
                "failover: {}; standby promoted in {} ms",
                mode.what(),
                promoted.duration_since(promote_started).as_millis()
            );
            (killed, promoted)
        }
        Mode::StandbyLost => {
            standby.stop();
            let killed = Instant::now();
            tokio::time::sleep(standby_down).await;
            standby.restart();
            eprintln!(
                "failover: standby down for {} s, started again",
                standby_down.as_secs()
            );
            (killed, Instant::now())
        }
    };
    // Writes are back once a point order sent after the kill is answered 200.
    let back = loop {
        let first = load
            .observed
            .lock()
            .unwrap()
            .answers
            .iter()
            .filter(|a| a.action == "point order" && a.status == 200 && a.sent >= killed)
            .map(|a| a.came)
            .min();
        if let Some(back) = first {
            break back;
        }
        assert!(
            killed.elapsed() < Duration::from_secs(120),
            "no write succeeded within 120 s of the kill"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    eprintln!(
        "failover: writes back {} ms after the kill",
        back.duration_since(killed).as_millis()
    );
    tokio::time::sleep(after).await;
    load.stop.store(true, Ordering::Relaxed);
    for client in clients {
        client.await.unwrap();
    }

    let writable_port = if mode == Mode::StandbyLost {
        primary.port
    } else {
        standby.port
    };
    let new_primary =
        |database: &str| format!("postgres://postgres@127.0.0.1:{writable_port}/{database}");
    let failures = verify(&load, &stack, &new_primary, killed).await;
    report(
        &load.observed.lock().unwrap(),
        mode,
        killed,
        promoted,
        back,
        &failures,
    );
    drop(stack);
    if failures.is_empty() {
        std::process::ExitCode::SUCCESS
    } else {
        std::process::ExitCode::FAILURE
    }
}

/// Commits on the primary wait for the standby from now on; returns once it is in sync.
async fn make_synchronous(admin: &str) {
    use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl, SimpleAsyncConnection};
    let mut conn = AsyncPgConnection::establish(admin).await.unwrap();
    // Two statements: ALTER SYSTEM refuses to run in the implicit transaction of a batch.
    for statement in [
        "ALTER SYSTEM SET synchronous_standby_names = '*'",
        "SELECT pg_reload_conf()",
    ] {
        conn.batch_execute(statement).await.unwrap();
    }
    #[derive(diesel::QueryableByName)]
    struct N {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        n: i64,
    }
    let started = Instant::now();
    loop {
        let sync: N = diesel::sql_query(
            "SELECT count(*) AS n FROM pg_stat_replication WHERE sync_state = 'sync'",
        )
        .get_result(&mut conn)
        .await
        .unwrap();
        if sync.n == 1 {
            return;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the standby is not synchronous after 30 s"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The answers the spec and `docs/decisions.md` name for each action while a database is
/// down, and nothing else (a 4xx the load cannot cause, a 502 from a point service that never
/// went away, no answer at all, are findings).
///
/// A point order (envelope B, through the relay): 200; 401 `UNAUTHORIZED` (the auth
/// database is down, so the caller lookup fails: "an outage looks like a bad token"); 500
/// `INTERNAL_ERROR` (a database that is down); 503 `SERVICE_UNAVAILABLE` (busy: the pool's
/// wait, a lock or statement timeout); 504 `POINT_SERVICE_TIMEOUT` (the relay's 10 s ran
/// out while the point service waited on a frozen server).
///
/// A gift code (envelope C, the order service's own route): 200; 401; 409 (the retry task
/// holds the redemption, or an earlier attempt whose answer was lost redeemed it); 500; 502
/// (redeemed, the credit still pending: the retry task finishes it); 503.
fn specified(answer: &Answer) -> bool {
    match answer.action {
        "point order" => matches!(
            (answer.status, answer.code.as_str()),
            (200, _)
                | (401, "UNAUTHORIZED")
                | (500, "INTERNAL_ERROR")
                | (503, "SERVICE_UNAVAILABLE")
                | (504, "POINT_SERVICE_TIMEOUT")
        ),
        "gift code" => matches!(
            (answer.status, answer.code.as_str()),
            (200, _)
                | (401, "statusCode 401")
                | (409, "statusCode 409")
                | (500, "statusCode 500")
                | (502, "statusCode 502")
                | (503, "statusCode 503")
        ),
        _ => false,
    }
}

async fn verify(
    load: &Load,
    stack: &Stack,
    new_primary: &dyn Fn(&str) -> String,
    killed: Instant,
) -> Vec<String> {
    let mut failures = Vec::new();
    let (orders, redeemed) = {
        let observed = load.observed.lock().unwrap();
        for answer in &observed.answers {
            if answer.status == 0 || !specified(answer) {
                failures.push(format!(
                    "{} answered {} {:?} {} ms after the kill",
                    answer.action,
                    answer.status,
                    answer.code,
                    answer.came.saturating_duration_since(killed).as_millis()
                ));
            }
        }
        (observed.orders.clone(), observed.redeemed.clone())
    };
    failures.truncate(20);
    // Every acknowledged order exists, successful, on the new primary (through the services
    // and in its ledger).
    let http = reqwest::Client::new();
    for (token, id, _) in &orders {
        let (status, order) = e2e::stack::call(
            &http,
            "GET",
            &format!("{}/api/v2/client/point-orders/{id}", stack.order.base),
            Some(token),
            &[],
            None,
        )
        .await;
        if status != 200 || order["status"] != "successful" {
            failures.push(format!("order {id} was acknowledged; now {status} {order}"));
        }
        let entries = money::count(
            &new_primary("points"),
            &format!("SELECT count(*) AS n FROM point_entries WHERE order_correlation_id = '{id}'"),
        )
        .await;
        if entries != 2 {
            failures.push(format!(
                "order {id} has {entries} ledger entries, not its spend and its gift"
            ));
        }
    }
    // Gift codes whose credit failed in the gap are credited by the retry task.
    let started = Instant::now();
    let pending = loop {
        let pending = money::count(
            &new_primary("catalog"),
            "SELECT count(*) AS n FROM gift_card_redemptions WHERE status = 'pending'",
        )
        .await;
        if pending == 0 || started.elapsed() > Duration::from_secs(120) {
            break pending;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    if pending > 0 {
        failures.push(format!(
            "{pending} gift-code redemptions still pending 120 s after the load"
        ));
    }
    for code in &redeemed {
        let credited = money::count(
            &new_primary("catalog"),
            &format!(
                "SELECT count(*) AS n FROM gift_card_redemptions WHERE code = '{code}' AND status = 'credited'"
            ),
        )
        .await;
        if credited != 1 {
            failures.push(format!(
                "gift code {code} was answered 200 but is not credited"
            ));
        }
    }
    let credited = money::count(
        &new_primary("catalog"),
        "SELECT count(*) AS n FROM gift_card_redemptions WHERE status = 'credited'",
    )
    .await;
    let entries = money::count(
        &new_primary("points"),
        "SELECT count(*) AS n FROM point_entries WHERE reference LIKE 'gift-card:%'",
    )
    .await;
    if credited != entries {
        failures.push(format!(
            "{credited} credited redemptions but {entries} gift-card ledger entries"
        ));
    }
    let audit = run("point-service", &["audit"], &new_primary("points"), &[]).await;
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
    mode: Mode,
    killed: Instant,
    promoted: Instant,
    back: Instant,
    failures: &[String],
) {
    let before = observed
        .orders
        .iter()
        .filter(|(_, _, at)| *at < killed)
        .count();
    println!("## Failover: the {}", mode.what());
    println!();
    println!(
        "- standby {} {} ms after the event; writes succeeded again {:.1} s after the event",
        if mode == Mode::StandbyLost {
            "started again"
        } else {
            "promoted"
        },
        promoted.duration_since(killed).as_millis(),
        back.duration_since(killed).as_secs_f64()
    );
    println!(
        "- point orders acknowledged: {before} before the kill, {} after; every one found \
         successful on the new primary with its two ledger entries: {}",
        observed.orders.len() - before,
        if failures.iter().any(|f| f.starts_with("order ")) {
            "no"
        } else {
            "yes"
        }
    );
    println!("- gift codes answered 200: {}", observed.redeemed.len());
    let mut gap: BTreeMap<(String, u16, String), u64> = BTreeMap::new();
    for answer in observed
        .answers
        .iter()
        .filter(|a| a.came >= killed && a.sent <= back)
    {
        *gap.entry((answer.action.to_owned(), answer.status, answer.code.clone()))
            .or_default() += 1;
    }
    println!();
    println!("Answers during the gap (sent before the writes were back, answered after the kill):");
    println!();
    println!("| Action | Status | Code | Count |");
    println!("|---|---|---|---|");
    for ((action, status, code), n) in &gap {
        println!("| {action} | {status} | {code} | {n} |");
    }
    println!();
    if failures.is_empty() {
        println!("- audit passed, no gift code pending, every credit once: every check held");
    } else {
        println!("FAILED:");
        for failure in failures {
            println!("- {failure}");
        }
    }
}
