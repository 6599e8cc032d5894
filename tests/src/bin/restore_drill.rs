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
//! After each: `point-service audit`, `point-service reconcile` for each UTC day of the drill,
//! the gift-code checks and `point-service cross-check`. Prints the figures (backup, restore
//! and time-to-ready seconds, what was lost) and the reconcile lines for docs/runbook.md;
//! exits 1 on any failure.
//!
//! **Money, not counts.** Phase 1 also pays card orders through the payment sandbox, which
//! plays the payment service and, like it, is not restored (it keeps running through the
//! restore, with what it captured): with each of its cards (`card_…` approved on its 3-D
//! Secure page as a client would, `silent_…` captured with its webhook lost, `lost_…` captured
//! with its pay answer lost; the last two credited by the point service's payment sync), some
//! credited before the target, some paid before it and approved only after it, and some made
//! after it. After the restore `reconcile` must report exactly one `capture_not_credited` line
//! per payment of an order made after the target (the order row is gone, so neither a webhook
//! nor the sync has anything to credit), and nothing for the others: those credited before
//! the target are in the restored ledger, and those paid before it but captured after it
//! belong to an order the restore kept open (`initial_order`, with its pay attempt), which the
//! sync reads back and credits again. The drill asserts those lines (kind, payment id, order)
//! and the exit codes, and that every card order kept is credited exactly once (one ledger
//! entry, one captured event) and every one taken back has neither.
//!
//! `RESTORE_DRILL_ORDERS` (default 200) point orders and `RESTORE_DRILL_CODES` (default 60)
//! gift codes per phase of load; `RESTORE_DRILL_CARDS` (default 3) card orders per card and
//! per side of the target.
//!
//! `DRILL_PLANT=double,missing` (either or both; read by this drill and `make failover` only)
//! makes the money wrong on purpose after the restore and before the checks, through SQL in
//! the restored ledger: `double` credits one card order kept a second time (a second entry and
//! a second captured event), `missing` deletes the credit of another (its entry and its
//! captured event); the balances follow, so what fails is what looks per reference (the
//! reconcile lines, the card credits, the audit's card-order check). The run must then fail
//! naming exactly those orders and payments.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a drill driver fails loudly on purpose

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use e2e::money::{self, CLIENTS};
use e2e::pg_server::{as_server_user, give_to_server_user, pg_bindir};
use e2e::stack::{Databases, Stack};
use e2e::{LocalCluster, Service, free_port, run};
use serde_json::json;

const STANZA: &str = "loyalty";
/// Quick gift-card retries, so that nothing is left pending when the checks run.
const ORDER_ENV: [(&str, &str); 2] = [
    ("GIFT_CARD_RETRY_INTERVAL_MS", "200"),
    ("GIFT_CARD_RETRY_MAX_BACKOFF_SECONDS", "1"),
];
/// The point service's payment sync, quick enough that a lost webhook or a lost pay answer is
/// read back and credited within seconds (the binary's defaults are 120 s, 30 s, 10 reads/s).
const POINTS_ENV: [(&str, &str); 3] = [
    ("PAYMENT_SYNC_AFTER_SECONDS", "1"),
    ("PAYMENT_SYNC_INTERVAL_SECONDS", "1"),
    ("PAYMENT_SYNC_READS_PER_SECOND", "50"),
];
/// The sandbox's cards (docs/design.md, "Payment service"): one that waits on its 3-D Secure
/// page (the drill approves it there, as its client would; the webhook credits it), one
/// captured at once whose webhook is never sent, one captured at once whose pay answer is
/// lost (502, so the pay route answers 500); the payment sync credits the last two.
const CARDS: [&str; 3] = ["card_drill", "silent_drill", "lost_drill"];
/// How long a capture may wait for its credit while the sync runs.
const SYNCED: Duration = Duration::from_secs(30);
/// How long an order the restore reopened may wait for the sync to credit it again: the
/// sync's lease (`worker_leases`) comes back with the database, held by a process that is
/// gone, and no other takes it before it runs out: `PAYMENT_SYNC_INTERVAL_SECONDS` + 2 ×
/// (`PAYMENT_SERVICE_TIMEOUT_MS` + 30 s) after its last renewal, 81 s here (110 s with the
/// binary's defaults); then one interval and a read.
const RESYNCED: Duration = Duration::from_secs(150);

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

/// A difference line of `point-service reconcile`: kind, payment id, order.
type Difference = (String, String, String);

/// The checks after a restore: audit, reconcile (every UTC day since `since`: exactly the
/// `expected` lines), cross-check (exactly `expected_cross`); each failure a line.
async fn checks(
    databases: &Databases,
    stack: &Stack,
    failures: &mut Vec<String>,
    since: chrono::NaiveDate,
    expected: &BTreeSet<Difference>,
    expected_cross: &str,
) {
    let audit = run("point-service", &["audit"], &databases.points, &[]).await;
    if !audit.status.success() {
        failures.push(format!(
            "audit: {}",
            String::from_utf8_lossy(&audit.stderr).trim()
        ));
    }
    reconcile(databases, stack, since, expected, failures).await;
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

/// `point-service reconcile --date <day>` for each UTC day from `since` to today, against the
/// sandbox, which kept every capture through the restore. Its difference lines, printed, must
/// be exactly `expected` (by kind, payment id and order), and each day must exit 1 when it
/// has some, 0 when it has none (never 2: nothing concluded).
async fn reconcile(
    databases: &Databases,
    stack: &Stack,
    since: chrono::NaiveDate,
    expected: &BTreeSet<Difference>,
    failures: &mut Vec<String>,
) {
    let today = chrono::Utc::now().date_naive();
    let mut found = BTreeSet::new();
    for day in since.iter_days().take_while(|day| *day <= today) {
        let date = day.to_string();
        let output = run(
            "point-service",
            &["reconcile", "--date", &date],
            &databases.points,
            &[("PAYMENT_SERVICE_URL", &stack.sandbox.base)],
        )
        .await;
        let code = output.status.code().unwrap_or(-1);
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        // Its log lines (JSON) go to stdout too: a difference is `kind<TAB>payment<TAB>...`.
        let lines: Vec<&str> = stdout
            .lines()
            .filter(|line| {
                line.split('\t').count() >= 5
                    && line.split('\t').next().is_some_and(|kind| {
                        kind.bytes().all(|b| b.is_ascii_lowercase() || b == b'_')
                    })
            })
            .collect();
        eprintln!(
            "restore-drill: reconcile --date {date}: exit {code}, {} line(s){}",
            lines.len(),
            if lines.is_empty() { "" } else { ":" }
        );
        for line in &lines {
            eprintln!("  {line}");
            let fields: Vec<&str> = line.split('\t').collect();
            found.insert((
                fields[0].to_owned(),
                fields.get(1).copied().unwrap_or_default().to_owned(),
                fields.get(2).copied().unwrap_or_default().to_owned(),
            ));
        }
        if let Some(summary) = stdout.lines().find(|line| line.starts_with("settlement ")) {
            eprintln!("  {summary}");
        }
        let want = if lines.is_empty() { 0 } else { 1 };
        if code != want {
            failures.push(format!(
                "reconcile --date {date} exited {code} with {} difference line(s), not {want}: {}",
                lines.len(),
                String::from_utf8_lossy(&output.stderr).trim()
            ));
        }
    }
    for (kind, payment, order) in expected.difference(&found) {
        failures.push(format!(
            "reconcile did not report {kind} of payment {payment} (order {order})"
        ));
    }
    for (kind, payment, order) in found.difference(expected) {
        failures.push(format!(
            "reconcile reported {kind} of payment {payment} (order {order}), which it must not"
        ));
    }
}

/// The `capture_not_credited` line of `card`'s payment.
fn line_of(card: &CardPayment) -> Difference {
    (
        "capture_not_credited".to_owned(),
        card.payment.clone(),
        card.order.clone(),
    )
}

/// A checkout order paid by card: its payer's token, the card, the order, the payment.
#[derive(Clone)]
struct CardPayment {
    token: &'static str,
    card: &'static str,
    order: String,
    payment: String,
}

/// A checkout order for `friend`, paid by `token` with `card`. A `lost` card's pay answer is
/// lost on purpose (500 `INTERNAL_ERROR`): its payment is found by reference, as the sync
/// finds it. A 3-D Secure card's payment waits on its page.
async fn pay_by_card(
    stack: &Stack,
    token: &'static str,
    friend: i64,
    card: &'static str,
) -> CardPayment {
    let orders = format!("{}/api/v2/client/point-orders", stack.order.base);
    let body =
        json!({"point_offer_id": money::OFFER, "to_client_id": friend, "payment_type": "checkout"});
    let (status, created) = stack
        .call("POST", &orders, Some(token), &[], Some(&body))
        .await;
    assert_eq!(status, 200, "checkout order: {created}");
    let order = created["correlation_id"].as_str().unwrap().to_owned();
    let (status, started) = stack
        .call(
            "POST",
            &format!("{orders}/{order}/pay/card"),
            Some(token),
            &[],
            Some(&json!({"id": card, "cvv": "123"})),
        )
        .await;
    let payment = if card.starts_with("lost") {
        assert_eq!(status, 500, "pay/card with {card}: {started}");
        let (status, found) = stack
            .call(
                "GET",
                &format!("{}/v1/payments?reference={order}", stack.sandbox.base),
                None,
                &[],
                None,
            )
            .await;
        assert_eq!(status, 200, "payments of {order}: {found}");
        found["data"][0]["id"].as_str().unwrap().to_owned()
    } else {
        assert_eq!(status, 200, "pay/card with {card}: {started}");
        started["id"].as_str().unwrap().to_owned()
    };
    CardPayment {
        token,
        card,
        order,
        payment,
    }
}

/// Presses Approve on the payment's 3-D Secure page: captured now, and answered once the
/// point service took the webhook.
async fn approve(stack: &Stack, card: &CardPayment) {
    let (status, page) = stack
        .call(
            "POST",
            &format!("{}/3ds/{}/approve", stack.sandbox.base, card.payment),
            None,
            &[],
            None,
        )
        .await;
    assert_eq!(status, 200, "approving {}: {page}", card.payment);
}

/// `n` card orders with each card of [`CARDS`] among the demo's clients; a 3-D Secure one is
/// approved at once when `approve_now`, else left waiting on its page.
async fn card_load(stack: &Stack, n: usize, approve_now: bool) -> Vec<CardPayment> {
    let mut paid = Vec::new();
    for i in 0..n {
        for (c, card) in CARDS.iter().enumerate() {
            if !approve_now && !is_3ds(card) {
                continue;
            }
            let (_, token) = CLIENTS[(i + c) % CLIENTS.len()];
            let friend = CLIENTS[(i + c + 1) % CLIENTS.len()].0;
            let payment = pay_by_card(stack, token, friend, card).await;
            if approve_now && is_3ds(card) {
                approve(stack, &payment).await;
            }
            paid.push(payment);
        }
    }
    paid
}

fn is_3ds(card: &str) -> bool {
    !card.starts_with("silent") && !card.starts_with("lost")
}

/// Waits until every order of `cards` is successful (credited by its webhook or by the
/// payment sync), at most `within`; a failure line for each that is not.
async fn wait_successful(
    stack: &Stack,
    cards: &[CardPayment],
    within: Duration,
    failures: &mut Vec<String>,
) {
    let http = stack.order.client();
    let started = Instant::now();
    let mut open: Vec<&CardPayment> = cards.iter().collect();
    while !open.is_empty() && started.elapsed() < within {
        let mut still = Vec::new();
        for card in open {
            let order = money::order_status(http, &stack.order.base, card.token, &card.order).await;
            if order["status"] != "successful" {
                still.push(card);
            }
        }
        open = still;
        if !open.is_empty() {
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }
    for card in open {
        failures.push(format!(
            "card order {} ({}, payment {}) not successful within {} s",
            card.order,
            card.card,
            card.payment,
            within.as_secs()
        ));
    }
}

/// The ledger's credits of each card order: `kept` ones (acknowledged before the target, or
/// open at it and credited again by the sync) successful with exactly one credit entry and
/// one captured event of their payment; the others (made after the target) gone, with
/// neither.
async fn card_credits(
    points_db: &str,
    cards: &[CardPayment],
    kept: bool,
    failures: &mut Vec<String>,
) {
    for card in cards {
        let found = sql(
            points_db,
            &format!(
                "SELECT COALESCE((SELECT status FROM point_orders WHERE correlation_id = '{order}'), 'gone') \
                 || ' ' || (SELECT count(*) FROM point_entries WHERE order_correlation_id = '{order}') \
                 || ' ' || (SELECT count(*) FROM payment_events WHERE payment_id = '{payment}' \
                            AND type = 'payment_captured' AND outcome = 'captured')",
                order = card.order,
                payment = card.payment
            ),
        )
        .await;
        let want = if kept { "successful 1 1" } else { "gone 0 0" };
        if found != want {
            failures.push(format!(
                "card order {} ({}, payment {}): status, credit entries, captured events = {found}, \
                 expected {want}",
                card.order, card.card, card.payment
            ));
        }
    }
}

/// Credits `card`'s order a second time, as a bug applying one capture twice would: a second
/// ledger entry like its first (the balance follows) and a second captured event of its
/// payment.
async fn plant_double(points_db: &str, card: &CardPayment) {
    sql(
        points_db,
        &format!(
            "BEGIN;
             WITH e AS (INSERT INTO point_entries (client_id, kind, points, order_correlation_id)
                        SELECT client_id, kind, points, order_correlation_id FROM point_entries
                        WHERE order_correlation_id = '{order}' RETURNING client_id, points)
             UPDATE point_accounts a SET balance = a.balance + e.points FROM e WHERE a.client_id = e.client_id;
             INSERT INTO payment_events (id, type, reference, payment_id, amount_minor, currency, outcome)
             SELECT 'drill-plant-' || id, type, reference, payment_id, amount_minor, currency, outcome
             FROM payment_events WHERE payment_id = '{payment}' AND type = 'payment_captured' AND outcome = 'captured';
             COMMIT;",
            order = card.order,
            payment = card.payment
        ),
    )
    .await;
}

/// Takes `card`'s credit away, as a lost write would: its ledger entry (past the append-only
/// trigger; the balance follows) and its captured event.
async fn plant_missing(points_db: &str, card: &CardPayment) {
    sql(
        points_db,
        &format!(
            "BEGIN;
             SET LOCAL session_replication_role = replica;
             WITH e AS (DELETE FROM point_entries WHERE order_correlation_id = '{order}'
                        RETURNING client_id, points)
             UPDATE point_accounts a SET balance = a.balance - e.points FROM e WHERE a.client_id = e.client_id;
             DELETE FROM payment_events
             WHERE payment_id = '{payment}' AND type = 'payment_captured' AND outcome = 'captured';
             COMMIT;",
            order = card.order,
            payment = card.payment
        ),
    )
    .await;
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
    let cards = count_of("RESTORE_DRILL_CARDS", 3);
    let (plant_double_credit, plant_missing_credit) = e2e::drill_plant::plants();
    let since = chrono::Utc::now().date_naive();
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
    let mut stack = Stack::start_with_extra(&databases, &[], &POINTS_ENV, &ORDER_ENV).await;
    let before = load(&stack, "a", orders, codes, 0).await;
    // Card orders credited before the target: by their webhook, or by the sync.
    let cards_before = card_load(&stack, cards, true).await;
    // Paid before the target, approved on their 3-D Secure page only after it.
    let cards_open = card_load(&stack, cards, false).await;
    wait_successful(&stack, &cards_before, SYNCED, &mut failures).await;
    // The update starts after this answer, so it commits after the target: not replayed.
    let target = sql(&admin, "SELECT now()::text").await;
    sql(&databases.points, "UPDATE point_accounts SET balance = 0").await;
    // Writes go on meanwhile (point orders now fail for want of points: gift codes and card
    // orders only), and the ledger credits every card payment before the restore.
    let after = load(&stack, "b", 0, codes / 4, codes).await;
    for card in &cards_open {
        approve(&stack, card).await;
    }
    let cards_after = card_load(&stack, cards, true).await;
    wait_successful(&stack, &cards_open, SYNCED, &mut failures).await;
    wait_successful(&stack, &cards_after, SYNCED, &mut failures).await;
    let audit = run("point-service", &["audit"], &databases.points, &[]).await;
    assert!(
        !audit.status.success(),
        "the mass update breaks the ledger's audit"
    );
    eprintln!("restore-drill: balances zeroed after {target}; restoring the cluster to it");
    // Our services scaled to 0; the payment service (the sandbox) is not ours and keeps
    // running, with every capture it made, before the target and after.
    let (auth_port, operator_port) = (stack.auth.port(), stack.operator.port());
    for service in [
        &mut stack.order,
        &mut stack.operator,
        &mut stack.points,
        &mut stack.auth,
    ] {
        service.stop().await;
    }
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
    // Reconciled with the services still at 0, as the runbook's checks are: every payment
    // captured after the target is missing from the ledger, those of orders made before it
    // (reopened, so the sync will credit them) as well as those of orders made after it.
    let (at_zero, made_after): (BTreeSet<Difference>, BTreeSet<Difference>) = (
        cards_after.iter().chain(&cards_open).map(line_of).collect(),
        cards_after.iter().map(line_of).collect(),
    );
    eprintln!("restore-drill: reconcile with the services still at 0");
    reconcile(&databases, &stack, since, &at_zero, &mut failures).await;
    // Back on their ports (the sandbox's webhooks still go to the point service's).
    stack.auth = Service::start_on("auth-service", auth_port, &databases.auth, &[]).await;
    stack.start_points_again().await;
    stack.start_order_again().await;
    stack.operator = Service::start_on(
        "operator-service",
        operator_port,
        &databases.catalog,
        &[
            ("POINT_SERVICE_URL", &stack.points.base),
            ("ORDER_SERVICE_URL", &stack.order.base),
        ],
    )
    .await;
    // The orders paid before the target and captured after it are open again: the sync reads
    // their payments back and credits them once more, once the sync's lease, restored with
    // the database and held by a process gone, has run out.
    let resynced = Instant::now();
    wait_successful(&stack, &cards_open, RESYNCED, &mut failures).await;
    let resync_seconds = resynced.elapsed().as_secs_f64();
    let kept: Vec<CardPayment> = cards_before.iter().chain(&cards_open).cloned().collect();
    if plant_double_credit {
        let card = &cards_before[0];
        plant_double(&databases.points, card).await;
        eprintln!(
            "restore-drill: DRILL_PLANT double: order {} (payment {}) credited a second time",
            card.order, card.payment
        );
    }
    if plant_missing_credit {
        let card = &cards_before[1];
        plant_missing(&databases.points, card).await;
        eprintln!(
            "restore-drill: DRILL_PLANT missing: the credit of order {} (payment {}) deleted",
            card.order, card.payment
        );
    }
    // Once the sync has run: every payment of an order made after the target (captured, its
    // order gone), and nothing else.
    let capture_lines = made_after;
    eprintln!("restore-drill: the checks, the services back and the sync run");
    checks(&databases, &stack, &mut failures, since, &capture_lines, "").await;
    card_credits(&databases.points, &kept, true, &mut failures).await;
    card_credits(&databases.points, &cards_after, false, &mut failures).await;
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
    eprintln!(
        "restore-drill 1, card payments: {} credited before the target, each credited once after \
         it; {} paid before it and captured after it, listed by reconcile with the services at 0 \
         and credited again by the payment sync {:.1} s after they were back (its restored lease \
         ran out first); {} of orders made after it, gone with their orders, each one \
         capture_not_credited line of reconcile ({}) before and after the sync",
        cards_before.len(),
        cards_open.len(),
        resync_seconds,
        cards_after.len(),
        capture_lines.len()
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
    // The day still differs by phase 1's captures (reconcile reads captures, not refunds):
    // the same lines, and no others.
    checks(
        &databases,
        &stack,
        &mut failures,
        since,
        &capture_lines,
        &expected.concat(),
    )
    .await;
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
    checks(
        &databases,
        &stack,
        &mut failures,
        since,
        &capture_lines,
        &expected.concat(),
    )
    .await;
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
    // A difference still there at a later check is named once.
    let mut named = BTreeSet::new();
    for failure in failures.iter().filter(|f| named.insert(f.as_str())) {
        eprintln!("FAILED: {failure}");
    }
    if failures.is_empty() {
        eprintln!("restore-drill: ok");
        std::process::ExitCode::SUCCESS
    } else {
        std::process::ExitCode::FAILURE
    }
}
