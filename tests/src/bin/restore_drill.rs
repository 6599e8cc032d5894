//! `make restore-drill`: the two classic disasters no replica helps with, recovered with
//! pgBackRest (Debian's package, as it comes) from a repository on local disk, WAL archived
//! continuously, on a project-local PostgreSQL cluster holding the three databases, with the
//! services running on it:
//!
//! 1. **A mistaken mass update** (every points balance set to 0 at a known time): the whole
//!    cluster is restored to just before it (`pgbackrest restore --type=time`). Every order
//!    and gift code acknowledged before the target time is there, credited once; what was
//!    written after it is gone (the drill counts it: that is the restore's price).
//! 2. **One database restored alone to an earlier time** (the catalog, while the ledger and
//!    the accounts keep going): restored beside the live cluster (`--db-include=catalog`),
//!    dumped and loaded in place of the live catalog. The catalog then forgets redemptions the
//!    ledger remembers: `point-service cross-check` lists exactly those, and redeeming one of
//!    those codes again credits nothing.
//!
//! After each: `point-service audit`, `point-service reconcile` for today, the gift-code
//! checks and `point-service cross-check`. Prints the figures (backup, restore and
//! time-to-ready seconds, what was lost) for docs/runbook.md; exits 1 on any failure.
//!
//! `RESTORE_DRILL_ORDERS` (default 200) point orders and `RESTORE_DRILL_CODES` (default 60)
//! gift codes per phase of load.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a drill driver fails loudly on purpose

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use e2e::money::{self, CLIENTS};
use e2e::pg_server::{as_server_user, give_to_server_user, pg_bindir};
use e2e::stack::{Databases, Stack};
use e2e::{LocalCluster, Service, free_port, run};

const STANZA: &str = "loyalty";
/// Quick gift-card retries, so that nothing is left pending when the checks run.
const ORDER_ENV: [(&str, &str); 2] = [
    ("GIFT_CARD_RETRY_INTERVAL_MS", "200"),
    ("GIFT_CARD_RETRY_MAX_BACKOFF_SECONDS", "1"),
];

fn count_of(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Runs `program` as the user the cluster runs as (`postgres` when we are root: the server,
/// and so pgBackRest, refuse root); its stdout, or the drill stops with its stderr.
fn as_postgres(program: &str, args: &[&str]) -> String {
    let output = as_server_user(&mut Command::new(program))
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{program}: {e}"));
    assert!(
        output.status.success(),
        "{program} {args:?}: {}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The pgBackRest repository, its configuration and its logs, in a folder of their own.
struct Backups {
    config: PathBuf,
}

impl Backups {
    fn new(dir: &Path, cluster: &LocalCluster) -> Backups {
        for sub in ["repo", "log", "lock", "spool"] {
            std::fs::create_dir_all(dir.join(sub)).unwrap();
        }
        let config = dir.join("pgbackrest.conf");
        std::fs::write(
            &config,
            format!(
                "[global]\nrepo1-path={dir}/repo\nrepo1-retention-full=2\nlog-path={dir}/log\n\
                 lock-path={dir}/lock\nspool-path={dir}/spool\nstart-fast=y\nlog-level-console=warn\n\n\
                 [{STANZA}]\npg1-path={data}\npg1-port={port}\npg1-socket-path={socket}\npg1-user=postgres\n",
                dir = dir.display(),
                data = cluster.dir().join("data").display(),
                port = cluster.port,
                socket = cluster.dir().display(),
            ),
        )
        .unwrap();
        give_to_server_user(dir);
        Backups { config }
    }

    fn run(&self, args: &[&str]) -> String {
        let config = format!("--config={}", self.config.display());
        let stanza = format!("--stanza={STANZA}");
        let mut all = vec![config.as_str(), stanza.as_str()];
        all.extend_from_slice(args);
        as_postgres("pgbackrest", &all)
    }

    /// The `archive_command` the cluster runs for each WAL segment.
    fn archive_command(&self) -> String {
        format!(
            "pgbackrest --config={} --stanza={STANZA} archive-push %p",
            self.config.display()
        )
    }
}

async fn sql(url: &str, statement: &str) -> String {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    client
        .simple_query(statement)
        .await
        .unwrap_or_else(|e| panic!("{statement}: {e}"))
        .into_iter()
        .find_map(|message| match message {
            tokio_postgres::SimpleQueryMessage::Row(row) => row.get(0).map(str::to_owned),
            _ => None,
        })
        .unwrap_or_default()
}

/// What one phase of load had acknowledged: the orders (payer's token, id) and the codes
/// (redeemer's client id, code).
#[derive(Default)]
struct Acknowledged {
    orders: Vec<(&'static str, String)>,
    codes: Vec<(i64, String)>,
}

/// `orders` point orders among the demo's clients and `codes` gift codes redeemed, one after
/// another (acknowledged means answered 200).
async fn load(
    stack: &Stack,
    phase: &str,
    orders: usize,
    codes: usize,
    first_code: usize,
) -> Acknowledged {
    let http = reqwest::Client::new();
    let mut done = Acknowledged::default();
    for i in 0..orders.max(codes) {
        let (payer, token) = CLIENTS[i % CLIENTS.len()];
        let friend = CLIENTS[(i + 1) % CLIENTS.len()].0;
        if i < orders {
            let key = format!("{phase}-{i}");
            let (status, order) =
                money::point_order(&http, &stack.order.base, token, friend, &key).await;
            assert_eq!(status, 200, "{phase}: order {i} by {payer}: {order}");
            done.orders
                .push((token, order["correlation_id"].as_str().unwrap().to_owned()));
        }
        if i < codes {
            let code = format!("RD-{:04}", first_code + i);
            let (status, answer) = money::redeem(&http, &stack.order.base, token, &code).await;
            assert_eq!(status, 200, "{phase}: code {code} by {payer}: {answer}");
            done.codes.push((payer, code));
        }
    }
    done
}

/// The checks after a restore: audit, reconcile (today), cross-check; each failure a line.
async fn checks(
    databases: &Databases,
    stack: &Stack,
    failures: &mut Vec<String>,
    expected_cross: &str,
) {
    let audit = run("point-service", &["audit"], &databases.points, &[]).await;
    if !audit.status.success() {
        failures.push(format!("audit: {}", String::from_utf8_lossy(&audit.stderr)));
    }
    let today = chrono::Utc::now().date_naive().to_string();
    let reconcile = run(
        "point-service",
        &["reconcile", "--date", &today],
        &databases.points,
        &[("PAYMENT_SERVICE_URL", &stack.sandbox.base)],
    )
    .await;
    if !reconcile.status.success() {
        failures.push(format!(
            "reconcile: {}",
            String::from_utf8_lossy(&reconcile.stdout)
        ));
    }
    let cross = run(
        "point-service",
        &["cross-check"],
        &databases.points,
        &[
            ("CATALOG_DATABASE_URL", &databases.catalog),
            ("AUTH_DATABASE_URL", &databases.auth),
        ],
    )
    .await;
    let lines = String::from_utf8_lossy(&cross.stdout).into_owned();
    if lines != expected_cross {
        failures.push(format!(
            "cross-check said:\n{lines}expected:\n{expected_cross}"
        ));
    }
}

/// Each code of `codes` is credited exactly once in the ledger, to its redeemer.
async fn credited_once(points_db: &str, codes: &[(i64, String)], failures: &mut Vec<String>) {
    for (client, code) in codes {
        let found = sql(
            points_db,
            &format!(
                "SELECT string_agg(client_id::text, ',') FROM point_entries \
                 WHERE reference = 'gift-card:{code}'"
            ),
        )
        .await;
        if found != client.to_string() {
            failures.push(format!(
                "{code}: credited to [{found}], redeemed by {client}"
            ));
        }
    }
}

async fn exists(points_db: &str, order: &str) -> bool {
    sql(
        points_db,
        &format!("SELECT count(*) FROM point_orders WHERE correlation_id = '{order}'"),
    )
    .await
        == "1"
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let orders = count_of("RESTORE_DRILL_ORDERS", 200);
    let codes = count_of("RESTORE_DRILL_CODES", 60);
    let mut failures = Vec::new();
    let work =
        std::env::temp_dir().join(format!("loyalty-restore-{}", uuid::Uuid::new_v4().simple()));

    eprintln!("restore-drill: a cluster archiving its WAL to a pgBackRest repository");
    let cluster = LocalCluster::start();
    let admin = cluster.admin_url();
    let backups = Backups::new(&work, &cluster);
    sql(&admin, "ALTER SYSTEM SET wal_level = 'replica'").await;
    sql(&admin, "ALTER SYSTEM SET archive_mode = 'on'").await;
    sql(
        &admin,
        &format!(
            "ALTER SYSTEM SET archive_command = '{}'",
            backups.archive_command()
        ),
    )
    .await;
    cluster.stop();
    cluster.up();
    backups.run(&["stanza-create"]);
    backups.run(&["check"]);
    let databases = e2e::loaded_databases(&admin, "RD", 4 * codes).await;
    let started = Instant::now();
    backups.run(&["backup", "--type=full"]);
    let backup_seconds = started.elapsed().as_secs_f64();

    // --- 1. a mistaken mass update, recovered by restoring the cluster to just before it.
    let mut stack = Stack::start_with(&databases, &[], &ORDER_ENV).await;
    let before = load(&stack, "a", orders, codes, 0).await;
    // The update starts after this answer, so it commits after the target: not replayed.
    let target = sql(&admin, "SELECT now()::text").await;
    sql(&databases.points, "UPDATE point_accounts SET balance = 0").await;
    // Writes go on meanwhile (point orders now fail for want of points: gift codes only).
    let after = load(&stack, "b", 0, codes / 4, codes).await;
    let audit = run("point-service", &["audit"], &databases.points, &[]).await;
    assert!(
        !audit.status.success(),
        "the mass update breaks the ledger's audit"
    );
    eprintln!("restore-drill: balances zeroed after {target}; restoring the cluster to it");
    drop(stack);
    sql(&admin, "SELECT pg_switch_wal()").await;
    backups.run(&["check"]); // every WAL segment up to now is archived
    let started = Instant::now();
    cluster.stop();
    let target_option = format!("--target={target}");
    backups.run(&[
        "restore",
        "--delta",
        "--type=time",
        &target_option,
        "--target-action=promote",
    ]);
    let restore_seconds = started.elapsed().as_secs_f64();
    cluster.up();
    while sql(&admin, "SELECT pg_is_in_recovery()::text").await != "false" {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let ready_seconds = started.elapsed().as_secs_f64();
    stack = Stack::start_with(&databases, &[], &ORDER_ENV).await;
    checks(&databases, &stack, &mut failures, "").await;
    for (_, order) in &before.orders {
        if !exists(&databases.points, order).await {
            failures.push(format!(
                "order {order}, acknowledged before the target, is gone"
            ));
        }
    }
    credited_once(&databases.points, &before.codes, &mut failures).await;
    let mut lost = 0;
    for (_, code) in &after.codes {
        let redeemed = sql(
            &databases.catalog,
            &format!("SELECT count(*) FROM gift_card_redemptions WHERE code = '{code}'"),
        )
        .await;
        let credited = sql(
            &databases.points,
            &format!("SELECT count(*) FROM point_entries WHERE reference = 'gift-card:{code}'"),
        )
        .await;
        lost += usize::from(redeemed == "0" && credited == "0");
    }
    if lost != after.codes.len() {
        failures.push(format!(
            "{lost} of the {} codes redeemed after the target are gone from both databases; all must be",
            after.codes.len()
        ));
    }
    eprintln!(
        "restore-drill 1: full backup {backup_seconds:.1} s; restore {restore_seconds:.1} s, ready \
         {ready_seconds:.1} s after the stop; {} orders and {} codes before the target all there; \
         {lost} of {} codes redeemed after the target gone from both catalog and ledger, as a \
         restore to that time must",
        before.orders.len(),
        before.codes.len(),
        after.codes.len()
    );

    // --- 2. the catalog alone back to an earlier time, while the ledger keeps going.
    backups.run(&["backup", "--type=incr"]);
    let earlier = sql(&admin, "SELECT now()::text").await;
    let forgotten = load(&stack, "c", orders / 4, codes, 2 * codes).await;
    sql(&admin, "SELECT pg_switch_wal()").await;
    backups.run(&["check"]);
    eprintln!("restore-drill: restoring the catalog alone to {earlier}, beside the live cluster");
    let scratch = work.join("scratch");
    std::fs::create_dir_all(&scratch).unwrap();
    give_to_server_user(&scratch);
    let started = Instant::now();
    let scratch_data = format!("--pg1-path={}", scratch.join("data").display());
    let earlier_option = format!("--target={earlier}");
    backups.run(&[
        "restore",
        &scratch_data,
        "--db-include=catalog",
        "--type=time",
        &earlier_option,
        "--target-action=promote",
    ]);
    let port = free_port();
    let bin = pg_bindir();
    // Its own port and socket, and no archiving: it must never write into the live stanza.
    let options = format!(
        "-p {port} -k {} -c listen_addresses=127.0.0.1 -c max_connections=300 -c archive_mode=off",
        scratch.display()
    );
    as_postgres(
        &format!("{bin}/pg_ctl"),
        &[
            "-D",
            scratch.join("data").to_str().unwrap(),
            "-l",
            scratch.join("server.log").to_str().unwrap(),
            "-w",
            "-t",
            "120",
            "-o",
            &options,
            "start",
        ],
    );
    let scratch_catalog = format!("postgres://postgres@127.0.0.1:{port}/catalog");
    while sql(&scratch_catalog, "SELECT pg_is_in_recovery()::text").await != "false" {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let dump = work.join("catalog.dump");
    let status = Command::new("pg_dump")
        .args([
            "--format=custom",
            "--file",
            dump.to_str().unwrap(),
            &scratch_catalog,
        ])
        .status()
        .unwrap();
    assert!(status.success(), "pg_dump of the restored catalog");
    as_postgres(
        &format!("{bin}/pg_ctl"),
        &[
            "-D",
            scratch.join("data").to_str().unwrap(),
            "-m",
            "fast",
            "-w",
            "stop",
        ],
    );
    // The services that use the catalog stop while it is replaced (scaled to zero).
    stack.order.stop().await;
    stack.operator.stop().await;
    // Into the live database, in one transaction: its owner, settings and grants stay, and a
    // failed load leaves it as it was.
    let status = Command::new("pg_restore")
        .args([
            "--clean",
            "--if-exists",
            "--single-transaction",
            "--dbname",
            &databases.catalog,
        ])
        .arg(&dump)
        .status()
        .unwrap();
    assert!(status.success(), "pg_restore of the catalog");
    stack.start_order_again().await;
    stack.operator = Service::start("operator-service", &databases.catalog, &[]).await;
    let catalog_seconds = started.elapsed().as_secs_f64();
    // The ledger remembers every redemption of phase c; the catalog forgot them all.
    let mut expected: Vec<String> = forgotten
        .codes
        .iter()
        .map(|(client, code)| {
            format!("credit_without_redemption\tgift-card:{code}\tclient {client}\t10\n")
        })
        .collect();
    expected.sort();
    checks(&databases, &stack, &mut failures, &expected.concat()).await;
    // Redeemed again, by the same client (answered 200) and by another (refused): the ledger's
    // gift-code credits, every reference counted, and every balance do not move.
    let ledger = "SELECT count(*) || ' ' || COALESCE(sum(points), 0) FROM point_entries \
                  WHERE kind = 'gift_card_credit'";
    let balances = "SELECT string_agg(client_id || ':' || balance, ',' ORDER BY client_id) FROM point_accounts";
    let (credits_before, balances_before) = (
        sql(&databases.points, ledger).await,
        sql(&databases.points, balances).await,
    );
    let http = reqwest::Client::new();
    let mut expected: Vec<String> = Vec::new();
    for (i, (client, code)) in forgotten.codes.iter().enumerate() {
        let reference = format!("gift-card:{code}");
        if i >= 10 {
            expected.push(format!(
                "credit_without_redemption\t{reference}\tclient {client}\t10\n"
            ));
            continue;
        }
        let by = if i % 2 == 0 {
            *client
        } else {
            CLIENTS.iter().find(|c| c.0 != *client).unwrap().0
        };
        let token = CLIENTS.iter().find(|c| c.0 == by).unwrap().1;
        let (status, answer) = money::redeem(&http, &stack.order.base, token, code).await;
        if by == *client && status != 200 {
            failures.push(format!(
                "{code} redeemed again by its client: {status} {answer}"
            ));
        }
        if by != *client {
            if status == 200 {
                failures.push(format!(
                    "{code} redeemed again by {by}, not its client: 200 {answer}"
                ));
            }
            expected.push(format!(
                "redeemed_by_another\t{reference}\tcredited 10 to {client}, redeemed by {by} (pending)\n"
            ));
        }
    }
    expected.sort();
    checks(&databases, &stack, &mut failures, &expected.concat()).await;
    if sql(&databases.points, ledger).await != credits_before
        || sql(&databases.points, balances).await != balances_before
    {
        failures.push("redeeming forgotten codes again moved the ledger".to_owned());
    }
    credited_once(&databases.points, &forgotten.codes, &mut failures).await;
    for (_, order) in &forgotten.orders {
        if !exists(&databases.points, order).await {
            failures.push(format!(
                "order {order} is gone, but only the catalog was restored"
            ));
        }
    }
    eprintln!(
        "restore-drill 2: the catalog alone to {earlier} in {catalog_seconds:.1} s (restore beside, \
         dump, load, services back); cross-check listed the {} redemptions it forgot; 10 of them \
         redeemed again (5 by their client: 200; 5 by another: refused, listed), the ledger unmoved",
        forgotten.codes.len()
    );
    drop(stack);
    drop(cluster);
    let _ = std::fs::remove_dir_all(&work);
    for failure in &failures {
        eprintln!("FAILED: {failure}");
    }
    if failures.is_empty() {
        eprintln!("restore-drill: ok");
        std::process::ExitCode::SUCCESS
    } else {
        std::process::ExitCode::FAILURE
    }
}
