//! `make soak`: the whole system under a mixed load while the point service, the order
//! service, PostgreSQL and NATS are killed and restarted under it, on loopback and a
//! PostgreSQL cluster and a NATS server of its own (both services publish their events
//! there). The mix has the money paths' awkward cases too: double-tap card
//! payments whose older attempt is declined, a capture arriving after the decline that failed
//! its order, duplicate and reordered webhook events, one gift code redeemed by every client
//! at once, card payments whose webhook is lost for good (`silent` cards), card payments whose
//! pay answer is lost on the way back (`lost` cards: the pay answers 500 `INTERNAL_ERROR`),
//! card payments whose pay call the gateway holds past the point service's wait and makes
//! only after the payment sync's first read of the order found nothing (`latelost` and
//! `latedecline` cards, [`late_hold`]), and signed events of a type the point service does
//! not know. The point service's payment sync runs quickly (`POINTS_ENV`) so that it credits
//! what the webhooks did not.
//!
//! Afterwards: `point-service audit` passes, every order the clients were told succeeded
//! exists as successful and was credited once, every capture that could not be applied is
//! listed by `point-service unapplied-captures` (and nothing else is), every gift code was
//! credited exactly once with none left pending and at most one 200, and every 5xx the clients
//! saw is one the specification or docs/design.md names. Against the payment sandbox's
//! settlement of every UTC day the load ran on (read over HTTP, every page): once no order with
//! a captured payment is left `initial_order` (polled, bounded), every captured payment is
//! credited exactly once (one `payment_captured` event applied, one ledger entry for its order)
//! or listed for refund, never both and never neither, and `point-service reconcile --date`
//! exits 0 for each of those days. Every late-lost order whose payment the sandbox made is
//! credited once (captured) or `payment_failed` with nothing credited (declined), or listed by
//! `point-service unsynced-orders`. The events (`events`): every ledger entry, order outcome,
//! capture listed for refund and credited redemption has exactly one event id in the stream,
//! none is for a change that did not commit, and per client they are in commit order. Prints
//! the counts (the events by type among them); exits 1 on any failure.
//!
//! `SOAK_SECONDS` (default 600) bounds the load phase; `SOAK_WORKERS` (default 8) sets the
//! number of concurrent clients.
//!
//! `SOAK_REPLICAS=2` (`make soak-rolling`) runs another topology and another disruption: two
//! replicas of each service behind HAProxy (e2e::replicated), restarted one at a time as a
//! Kubernetes rollout does (out of the balancer, the preStop wait, SIGTERM, the process
//! drains and exits, a new one starts and rejoins once ready), with no kill and no database
//! restart. Then no request may fail: any 5xx but the specified 503 of contention (a busy
//! pool or lock, docs/design.md), any 401 and any unreachable service is a failure, and so is a
//! process that takes longer than the pods' grace period to exit.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test driver fails loudly on purpose

mod checks;
mod events;
mod load;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use e2e::demo;
use e2e::replicated::{ORDER, POINTS, ReplicatedStack, SERVICES};
use e2e::stack::{Databases, Stack};
use e2e::{LocalCluster, demo_databases_on};
use tokio::sync::RwLock;

use checks::{Payments, verify};
use load::{Disruptions, Observed, Soak, System, sample_connections};

/// The demo's active clients, who pay and redeem (`e2e::demo`).
const CLIENTS: [(i64, &str); 5] = [
    (1001, demo::SARA),
    (1002, demo::OMAR),
    (1003, demo::NOURA),
    (1004, demo::FAHAD),
    (1005, demo::REEM),
];
const OFFER: &str = demo::OFFER_100;
const GIFT_CODES: usize = 5000;
/// Codes that every client redeems at once (one 200 at most, one credit exactly).
const RUSH_CODES: usize = 4000;
/// The pods' `terminationGracePeriodSeconds` and `preStop` sleep (k8s/base): a rolling restart
/// waits the preStop time after taking a replica out of the balancer, and the process must
/// exit within the rest of the grace period.
const GRACE_PERIOD: Duration = Duration::from_secs(50);
const PRE_STOP: Duration = Duration::from_secs(5);
/// The order service's gift-card retry task, quick enough that what the kills left pending
/// drains within the checks' wait (lease + longest backoff + interval, well under 180 s).
const ORDER_ENV: [(&str, &str); 3] = [
    ("GIFT_CARD_RETRY_INTERVAL_MS", "1000"),
    ("GIFT_CARD_RETRY_MAX_BACKOFF_SECONDS", "20"),
    ("GIFT_CARD_CREDIT_LEASE_SECONDS", "15"),
];
/// The point service's payment sync, quick enough that what lost webhooks and lost pay
/// answers left open is read back and credited while the load runs and within the checks'
/// wait (the binary's defaults are 120 s, 30 s and 10 reads/s); and its wait for the payment
/// service, the binary's default written out because the late-lost cards' hold is derived
/// from it ([`late_hold`]).
const POINTS_ENV: [(&str, &str); 4] = [
    ("PAYMENT_SYNC_AFTER_SECONDS", "5"),
    ("PAYMENT_SYNC_INTERVAL_SECONDS", "2"),
    ("PAYMENT_SYNC_READS_PER_SECOND", "50"),
    ("PAYMENT_SERVICE_TIMEOUT_MS", "10000"),
];

/// A number of `POINTS_ENV`.
fn points_setting(name: &str) -> u64 {
    POINTS_ENV
        .iter()
        .find(|(n, _)| *n == name)
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or_else(|| panic!("POINTS_ENV has no number {name}"))
}

/// How long the sandbox holds a late-lost card's pay call (the card id carries it,
/// `load::late_card`): past the point service's wait for the payment service
/// (`PAYMENT_SERVICE_TIMEOUT_MS`), so that the call times out and its attempt is recorded
/// lost, as with a slow gateway. The sandbox makes the payment only once the hold is over and
/// the order's payments have been read by reference since the call: the payment sync's first
/// read of the order once the attempt is lost finds nothing, whenever it comes (a kill of the
/// point service may hold the sync back for its lease), and only a later read can find the
/// payment.
pub(crate) fn late_hold() -> Duration {
    Duration::from_millis(points_setting("PAYMENT_SERVICE_TIMEOUT_MS")) + Duration::from_secs(2)
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
    let replicas: usize = std::env::var("SOAK_REPLICAS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);

    eprintln!("soak: starting a PostgreSQL cluster of its own, a NATS server and the system");
    let cluster = LocalCluster::start();
    let admin = cluster.admin_url();
    let databases = demo_databases_on(&admin).await;
    prepare(&databases).await;
    // Both services publish their events to it; the chaos kills it with the rest.
    let nats = tokio::sync::Mutex::new(testkit::nats::NatsServer::start());
    let nats_url = nats.lock().await.url();
    let events_env = [("NATS_URL", nats_url.as_str()), ("EVENTS_POLL_MS", "100")];
    let points_env: Vec<(&str, &str)> = POINTS_ENV.iter().chain(&events_env).copied().collect();
    let order_env: Vec<(&str, &str)> = ORDER_ENV.iter().chain(&events_env).copied().collect();

    let system = if replicas > 1 {
        let stack =
            ReplicatedStack::start_with_extra(&databases, replicas, &[], &points_env, &order_env)
                .await;
        System::Replicated {
            order: stack.url(ORDER),
            points: stack.url(POINTS),
            stack: Box::new(tokio::sync::Mutex::new(stack)),
        }
    } else {
        System::One(Box::new(RwLock::new(
            Stack::start_with_extra(&databases, &[], &points_env, &order_env).await,
        )))
    };
    let soak = Arc::new(Soak {
        strict: matches!(system, System::Replicated { .. }),
        peaks: Mutex::default(),
        system,
        observed: Mutex::default(),
        http: reqwest::Client::builder()
            .timeout(Duration::from_secs(30))
            .pool_idle_timeout(e2e::CLIENT_IDLE)
            .build()
            .unwrap(),
        stop: AtomicBool::new(false),
        next_code: AtomicU64::new(0),
        next_rush: AtomicU64::new(0),
        next_event: AtomicU64::new(0),
        next_late: AtomicU64::new(0),
        late_hold: late_hold(),
        started_on: chrono::Utc::now().date_naive(),
    });

    let sampler = match &soak.system {
        System::Replicated { stack, .. } => {
            let stack = stack.lock().await;
            let bases = SERVICES
                .iter()
                .flat_map(|s| {
                    stack
                        .replicas(s)
                        .iter()
                        .enumerate()
                        .map(move |(i, r)| (format!("{s} r{i}"), r.base.clone()))
                })
                .collect();
            Some(tokio::spawn(sample_connections(
                soak.clone(),
                bases,
                admin.clone(),
            )))
        }
        System::One(_) => None,
    };
    if replicas > 1 {
        eprintln!(
            "soak: {workers} clients for {seconds} s, {replicas} replicas of each service, \
             a rolling restart step every 10 s"
        );
    } else {
        eprintln!("soak: {workers} clients for {seconds} s, with a kill every 15 s");
    }
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
    let disruptions = async {
        if replicas > 1 {
            Disruptions::Restarts(soak.rolling(Duration::from_secs(10), replicas).await)
        } else {
            Disruptions::Kills(soak.chaos(&cluster, &nats, Duration::from_secs(15)).await)
        }
    };
    let (disruptions, ()) = tokio::join!(disruptions, stopper);
    for client in clients {
        client.await.unwrap();
    }
    let load_time = started.elapsed();
    let connections = match sampler {
        Some(sampler) => {
            sampler.abort();
            let _ = sampler.await;
            std::mem::take(&mut *soak.peaks.lock().unwrap())
        }
        None => BTreeMap::new(),
    };

    eprintln!("soak: load stopped; checking");
    let (mut failures, payments) = verify(&soak, &databases).await;
    let (event_failures, events_by_type) = events::verify(&databases, &*nats.lock().await).await;
    failures.extend(event_failures);
    if let Disruptions::Restarts(restarts) = &disruptions {
        for (replica, drained) in restarts {
            if *drained > GRACE_PERIOD - PRE_STOP {
                failures.push(format!(
                    "{replica} took {} ms from SIGTERM to exit, past the {} s grace period less the {} s preStop",
                    drained.as_millis(),
                    GRACE_PERIOD.as_secs(),
                    PRE_STOP.as_secs()
                ));
            }
        }
    }
    let (requests, resent) = match &soak.system {
        System::Replicated { stack, .. } => {
            let stack = stack.lock().await;
            (stack.balancer.stats().await, Some(stack.resent_calls()))
        }
        System::One(_) => (Vec::new(), None),
    };
    report(
        &soak.observed.lock().unwrap(),
        &payments,
        &disruptions,
        &requests,
        &connections,
        load_time,
        &failures,
    );
    println!("- events in the stream, by type:");
    for (subject, n) in &events_by_type {
        println!("  - {subject}: {n}");
    }
    if let Some(resent) = resent {
        println!("- calls between services resent after meeting a closing connection: {resent}");
    }
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
    catalog
        .batch_execute(&format!(
            "INSERT INTO gift_card_codes (code, points, active)
             SELECT 'RUSH-' || lpad(g::text, 4, '0'), 7.25, true FROM generate_series(0, {}) g",
            RUSH_CODES - 1
        ))
        .await
        .unwrap();
}

fn report(
    observed: &Observed,
    payments: &Payments,
    disruptions: &Disruptions,
    requests: &[e2e::balancer::ReplicaStat],
    connections: &BTreeMap<String, u64>,
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
    match disruptions {
        Disruptions::Kills(kills) => {
            for (victim, n) in kills {
                println!("- {victim} killed and restarted {n} times");
            }
        }
        Disruptions::Restarts(restarts) => {
            let longest = restarts.iter().map(|(_, d)| *d).max().unwrap_or_default();
            println!(
                "- rolling restart steps (out of the balancer, {} s preStop, SIGTERM, exit, start, \
                 ready): {}; longest SIGTERM to exit: {} ms",
                PRE_STOP.as_secs(),
                restarts.len(),
                longest.as_millis()
            );
            println!();
            println!("| Replica | Connections through the balancer | Peak pool connections |");
            println!("|---|---|---|");
            for stat in requests {
                let name = format!("{} r{}", stat.service, stat.replica);
                println!(
                    "| {name} | {} | {} |",
                    stat.connections,
                    connections.get(&name).copied().unwrap_or(0)
                );
            }
            for (name, peak) in connections
                .iter()
                .filter(|(n, _)| n.starts_with("database "))
            {
                println!("- {name}: at most {peak} connections at once");
            }
        }
    }
    println!(
        "- point orders answered successful: {} (all verified)",
        observed.successful.len()
    );
    println!("- card orders approved: {}", observed.approved.len());
    println!("- gift codes redeemed: {}", observed.redeemed.len());
    println!(
        "- rush codes (every client at once): {}, answered 200 once: {}, never (credited by the \
         retry task or a 5xx retry): {}",
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
    println!(
        "- silent cards (captured, webhook lost), pay answered 200: {}; lost cards (captured, \
         answer lost), pay answered 500: {}; unknown-type events answered unknown_type: {}",
        observed.silent.len(),
        observed.lost.len(),
        observed.unknown_type.len()
    );
    println!(
        "- late-lost cards (the pay held {} s, past the point service's {} ms wait; the payment \
         made, with no webhook, only after the first read of the order's payments by reference):",
        late_hold().as_secs(),
        points_setting("PAYMENT_SERVICE_TIMEOUT_MS")
    );
    for (kind, tally) in [
        ("latelost (captured)", &payments.late_captured),
        ("latedecline (declined)", &payments.late_declined),
    ] {
        println!(
            "  - {kind}: {} pays sent ({}); payment made at the sandbox: {}, none (the call \
             never reached it): {}; of those made, {}: {}, listed by unsynced-orders: {}, \
             neither: {}",
            tally.sent,
            tally
                .answered
                .iter()
                .map(|(answer, n)| format!("answered {answer}: {n}"))
                .collect::<Vec<_>>()
                .join(", "),
            tally.made,
            tally.not_made,
            if kind.starts_with("latelost") {
                "credited once"
            } else {
                "payment_failed, nothing credited"
            },
            tally.decided,
            tally.listed,
            tally.neither
        );
    }
    for (day, captures) in &payments.days {
        println!("- sandbox settlement {day}: {captures} captures");
    }
    println!(
        "- card credits by webhook: {}, by the payment sync: {}; captures listed for refund: {}",
        payments.credited_by_webhook, payments.credited_by_sync, payments.listed
    );
    println!(
        "- waited {} s for no order with a captured payment to be left open (the payment sync)",
        payments.settled_after.as_secs()
    );
    for line in &payments.reconciled {
        println!("- reconcile: {line}");
    }
    if matches!(disruptions, Disruptions::Restarts(_)) {
        println!(
            "- failed requests (any 5xx but contention's 503, any 401, unreachable): {}",
            observed.unexpected.len()
        );
    } else {
        println!("- unspecified 5xx answers: {}", observed.unexpected.len());
    }
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
