//! `make failover`: the services on a replicated PostgreSQL, connected with a multi-host
//! `DATABASE_URL` (`target_session_attrs=read-write`), under a load of point orders and gift
//! codes; then the primary is lost. Reports the seconds until writes succeed again and the
//! answers in the gap, and checks that every order acknowledged before the event (and after
//! it) exists on the new primary, that every answer during the gap was one the specification
//! names, that nothing was left half-written (the ledger audit, no gift code left pending)
//! and that the money is right per reference (`credits.rs`): every movement of points the
//! clients were answered 200 for (an order's charge and gift, a gift code's credit) is in the
//! ledger exactly once, and the ledger holds nothing else since the load began but what a
//! request left unanswered may have made, at most once; each difference is named by its
//! reference (`order:<id>`, `gift-card:<code>`), where totals let a double credit and a
//! lost one cancel out. Prints the figures; exits 1 on any failure.
//!
//! `FAILOVER_ENGINE`:
//! - `patroni` (the default): three Patroni members (Debian's `patroni`) and one etcd, in
//!   synchronous mode, as operators run it (`e2e::patroni`): Patroni notices, elects, promotes
//!   and fences.
//! - `pg_ctl`: a primary and one synchronous streaming standby, promoted by this driver
//!   (`pg_ctl.rs`): no failover manager, the floor of what one can do.
//!
//! `FAILOVER_MODE`:
//! - `kill` (the default): the primary's host lost (Patroni and PostgreSQL SIGKILLed; with
//!   `pg_ctl`, an immediate shutdown);
//! - `freeze`: every process of the primary SIGSTOPped (its kernel keeps accepting and
//!   acknowledging, nothing answers, as with a hung host; the services must give up on it by
//!   their own deadlines, `db::connect`); with Patroni the watchdog stand-in resets it
//!   (`e2e::patroni`: the leader's Patroni no longer runs its loop) before another member is
//!   promoted, and after the load it boots again (thawed, if it was never reset) and must
//!   rejoin as a replica;
//! - `switchover` (Patroni): a planned switchover to the synchronous standby;
//! - `standby-lost`: the synchronous standby lost, the primary stays; for
//!   `FAILOVER_STANDBY_DOWN_SECONDS` (default 30), then started again. With `pg_ctl` every
//!   commit waits for it meanwhile (docs/scaling.md, "A synchronous standby lost"); Patroni
//!   makes the other replica synchronous.
//!
//! `FAILOVER_WARMUP_SECONDS` (default 20) of load before the event, `FAILOVER_AFTER_SECONDS`
//! (default 20) after the writes are back; `FAILOVER_WORKERS` (default 6) clients;
//! `FAILOVER_PROMOTE_DELAY_SECONDS` (default 0, `pg_ctl` only) between the kill and the
//! promotion, the time a failover manager would take to notice.
//!
//! "Nothing half-written" is the point service's audit (an order's entries exist exactly
//! when it is successful, every credit once, every balance the sum of its entries) and the
//! gift-code checks (`check.rs`).
//!
//! `DRILL_PLANT=double,missing` (either or both; read by this drill and `make restore-drill`
//! only) makes the money wrong on purpose after the load and before the checks, through SQL
//! on the new primary: `double` credits the first gift code answered 200 a second time under
//! its redemption's id (`gift-card:<id>`), `missing` deletes the second one's credit; the
//! balances and the internal-credit records follow, so the audit and the old totals still
//! agree. The run must then fail naming exactly those two codes.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a test driver fails loudly on purpose

mod check;
mod credits;
mod load;
mod pg_ctl;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use e2e::stack::{Databases, Stack};
use e2e::{LocalCluster, patroni};

use load::{GIFT_CODES, Load};
use pg_ctl::Standby;

/// The order service's gift-card retry task, quick enough that redemptions whose credit
/// failed in the gap are credited before the checks.
const ORDER_ENV: [(&str, &str); 3] = [
    ("GIFT_CARD_RETRY_INTERVAL_MS", "500"),
    ("GIFT_CARD_RETRY_MAX_BACKOFF_SECONDS", "5"),
    ("GIFT_CARD_CREDIT_LEASE_SECONDS", "15"),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    Kill,
    Freeze,
    Switchover,
    StandbyLost,
}

impl Mode {
    pub(crate) fn what(self) -> &'static str {
        match self {
            Mode::Kill => "primary killed",
            Mode::Freeze => "primary frozen (SIGSTOP)",
            Mode::Switchover => "planned switchover",
            Mode::StandbyLost => "synchronous standby lost",
        }
    }
}

/// The replicated PostgreSQL under the services.
enum Engine {
    PgCtl {
        primary: LocalCluster,
        standby: Standby,
    },
    Patroni(patroni::Cluster),
}

/// What happened to the databases: when the event was done, and when a new primary (or the
/// standby again) was there.
pub(crate) struct Event {
    pub(crate) at: Instant,
    pub(crate) recovered: Instant,
    /// What the engine said meanwhile (the new leader, a rejoin).
    pub(crate) notes: Vec<String>,
    /// The Patroni member the event hit.
    member: Option<usize>,
}

fn seconds(name: &str, default: u64) -> Duration {
    Duration::from_secs(
        std::env::var(name)
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(default),
    )
}

impl Engine {
    async fn start(patroni: bool) -> (Engine, String) {
        if patroni {
            let cluster = patroni::Cluster::start(3).await;
            let leader = cluster.leader().await.unwrap();
            let admin = cluster.member_url(leader, "postgres");
            (Engine::Patroni(cluster), admin)
        } else {
            let primary = LocalCluster::start();
            let admin = primary.admin_url();
            let standby = Standby::start(primary.port);
            pg_ctl::make_synchronous(&admin).await;
            (Engine::PgCtl { primary, standby }, admin)
        }
    }

    /// The services' URL of `database`: every server, the one taking writes chosen.
    fn url(&self, database: &str) -> String {
        match self {
            Engine::Patroni(cluster) => cluster.url(database),
            Engine::PgCtl { primary, standby } => format!(
                "postgres://postgres@127.0.0.1:{},127.0.0.1:{}/{database}?target_session_attrs=read-write",
                primary.port, standby.port
            ),
        }
    }

    async fn event(
        &mut self,
        mode: Mode,
        promote_delay: Duration,
        standby_down: Duration,
    ) -> Event {
        match self {
            Engine::PgCtl { primary, standby } => {
                let at;
                match mode {
                    Mode::Kill | Mode::Freeze => {
                        if mode == Mode::Freeze {
                            primary.freeze();
                        } else {
                            primary.kill();
                        }
                        at = Instant::now();
                        tokio::time::sleep(promote_delay).await;
                        standby.promote();
                    }
                    Mode::StandbyLost => {
                        standby.stop();
                        at = Instant::now();
                        tokio::time::sleep(standby_down).await;
                        standby.restart();
                    }
                    Mode::Switchover => panic!("FAILOVER_MODE=switchover needs Patroni"),
                }
                Event {
                    at,
                    recovered: Instant::now(),
                    notes: Vec::new(),
                    member: None,
                }
            }
            Engine::Patroni(cluster) => {
                let leader = cluster.leader().await.unwrap();
                let sync = cluster.sync_standby().await.expect("a synchronous standby");
                let name = |m: usize| cluster.members[m].name.clone();
                let mut notes = vec![format!(
                    "leader {} with synchronous standby {}",
                    name(leader),
                    name(sync)
                )];
                let hit = if mode == Mode::StandbyLost {
                    sync
                } else {
                    leader
                };
                let at = Instant::now();
                let recovered = match mode {
                    Mode::Kill | Mode::Freeze | Mode::Switchover => {
                        match mode {
                            Mode::Kill => cluster.kill(leader),
                            Mode::Freeze => cluster.freeze(leader),
                            _ => cluster.switchover(leader, sync),
                        }
                        let new = cluster
                            .wait_for_leader(Some(leader), Duration::from_secs(120))
                            .await;
                        notes.push(format!(
                            "{} leads and takes writes",
                            cluster.members[new].name
                        ));
                        Instant::now()
                    }
                    Mode::StandbyLost => {
                        cluster.kill(sync);
                        tokio::time::sleep(standby_down).await;
                        cluster.start_member(sync);
                        Instant::now()
                    }
                };
                Event {
                    at,
                    recovered,
                    notes,
                    member: Some(hit),
                }
            }
        }
    }

    /// After the load, the member the event hit comes back (a killed host restarted, a
    /// frozen one let go) and must rejoin as a replica of the new leader (Patroni fences it
    /// and rewinds it with pg_rewind): every member running, one leader.
    /// Returns what failed to settle.
    async fn settle(&mut self, mode: Mode, event: &mut Event) -> Option<String> {
        let Engine::Patroni(cluster) = self else {
            return None;
        };
        let hit = event.member?;
        match mode {
            Mode::Kill => cluster.start_member(hit),
            Mode::Freeze => match cluster.reset_by_watchdog(hit, event.at) {
                // The host was reset while hung: it boots again.
                Some(reset) => {
                    event.notes.push(format!(
                        "{} reset by the watchdog stand-in {:.1} s after the freeze",
                        cluster.members[hit].name,
                        reset.duration_since(event.at).as_secs_f64()
                    ));
                    cluster.kill(hit);
                    cluster.start_member(hit);
                }
                None => cluster.thaw(hit),
            },
            Mode::Switchover | Mode::StandbyLost => {}
        }
        let back = Instant::now();
        let deadline = back + Duration::from_secs(120);
        loop {
            let roles = cluster.roles().await;
            let leaders = roles.iter().filter(|r| r.role == "leader").count();
            let running = roles.iter().filter(|r| r.running).count();
            // Patroni's `role` is only "not the lock holder": the member itself must be a
            // standby streaming from the new leader.
            if leaders == 1 && running == cluster.members.len() && cluster.streaming(hit).await {
                let role = roles
                    .iter()
                    .find(|r| r.member == hit)
                    .map_or("?", |r| r.role.as_str());
                event.notes.push(format!(
                    "{} back as {role} {:.1} s after it was let go; all {} members running, one leader",
                    cluster.members[hit].name,
                    back.elapsed().as_secs_f64(),
                    cluster.members.len(),
                ));
                return None;
            }
            if Instant::now() > deadline {
                return Some(format!(
                    "120 s after {} was let go: {leaders} leader(s), {running} member(s) running",
                    cluster.members[hit].name
                ));
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let patroni = match std::env::var("FAILOVER_ENGINE").as_deref() {
        Ok("patroni") | Err(_) => true,
        Ok("pg_ctl") => false,
        Ok(other) => panic!("FAILOVER_ENGINE={other:?}: expected patroni or pg_ctl"),
    };
    let mode = match std::env::var("FAILOVER_MODE").as_deref() {
        Ok("kill") | Err(_) => Mode::Kill,
        Ok("freeze") => Mode::Freeze,
        Ok("switchover") => Mode::Switchover,
        Ok("standby-lost") => Mode::StandbyLost,
        Ok(other) => {
            panic!("FAILOVER_MODE={other:?}: expected kill, freeze, switchover or standby-lost")
        }
    };
    let standby_down = seconds("FAILOVER_STANDBY_DOWN_SECONDS", 30);
    let warmup = seconds("FAILOVER_WARMUP_SECONDS", 20);
    let promote_delay = seconds("FAILOVER_PROMOTE_DELAY_SECONDS", 0);
    let after = seconds("FAILOVER_AFTER_SECONDS", 20);
    let workers: usize = std::env::var("FAILOVER_WORKERS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(6);

    let engine_name = if patroni {
        "Patroni (3 members, synchronous mode, etcd)"
    } else {
        "pg_ctl (a primary and a synchronous standby)"
    };
    eprintln!("failover: {engine_name}, and the databases");
    let (mut engine, admin) = Engine::start(patroni).await;
    e2e::loaded_databases(&admin, "FO", GIFT_CODES).await;

    let databases = Databases {
        auth: engine.url("auth"),
        points: engine.url("points"),
        catalog: engine.url("catalog"),
    };
    // The ledger's entries after this one are the load's.
    let baseline = check::last_entry(&databases.points).await;
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
    let mut event = engine.event(mode, promote_delay, standby_down).await;
    let killed = event.at;
    eprintln!(
        "failover: {}; recovered {} ms after",
        mode.what(),
        event.recovered.duration_since(killed).as_millis()
    );
    // Writes are back once a point order sent after the event is answered 200.
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
            "no write succeeded within 120 s of the event"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    eprintln!(
        "failover: writes back {} ms after the event",
        back.duration_since(killed).as_millis()
    );
    tokio::time::sleep(after).await;
    load.stop.store(true, Ordering::Relaxed);
    for client in clients {
        client.await.unwrap();
    }
    let unsettled = engine.settle(mode, &mut event).await;

    let new_primary = |database: &str| engine.url(database);
    let redeemed = load.observed.lock().unwrap().redeemed.clone();
    for planted in check::plant(&redeemed, &new_primary).await {
        eprintln!("failover: DRILL_PLANT {planted}");
    }
    let (mut failures, compared) =
        check::verify(&load, &stack, &new_primary, killed, baseline).await;
    failures.extend(unsettled);
    check::report(
        &load.observed.lock().unwrap(),
        engine_name,
        mode,
        &event,
        back,
        &compared,
        &failures,
    );
    drop(stack);
    if failures.is_empty() {
        std::process::ExitCode::SUCCESS
    } else {
        std::process::ExitCode::FAILURE
    }
}
