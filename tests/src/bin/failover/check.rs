//! After the load: what must hold on the new primary, and the figures.

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

use e2e::money;
use e2e::run;
use e2e::stack::Stack;

use crate::credits::{self, Movement};
use crate::load::{
    Acknowledged, CODE_POINTS, Load, OFFER_POINTS, OFFER_PRICE_POINTS, Observed, specified,
};
use crate::{Event, Mode};

/// Every row of a query on `url`, each column as text (NULL as empty).
pub(crate) async fn rows(url: &str, sql: &str) -> Vec<Vec<String>> {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .unwrap_or_else(|e| panic!("{url}: {e}"));
    tokio::spawn(connection);
    client
        .simple_query(sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .into_iter()
        .filter_map(|message| match message {
            tokio_postgres::SimpleQueryMessage::Row(row) => Some(
                (0..row.len())
                    .map(|i| row.get(i).unwrap_or_default().to_owned())
                    .collect(),
            ),
            _ => None,
        })
        .collect()
}

/// The last ledger entry's id: the entries after it are the load's.
pub(crate) async fn last_entry(points_db: &str) -> i64 {
    money::count(
        points_db,
        "SELECT COALESCE(max(id), 0) AS n FROM point_entries",
    )
    .await
}

/// What the load observed that the checks read, copied out of its lock.
struct Snapshot {
    orders: Vec<Acknowledged>,
    unanswered: Vec<(i64, i64, String)>,
    redeemed: Vec<(i64, String)>,
    tried: Vec<(i64, String)>,
}

/// What the per-reference comparison found: its lines, and what it looked at.
pub(crate) struct ByReference {
    pub(crate) lines: Vec<String>,
    pub(crate) acknowledged: usize,
    pub(crate) maybe: usize,
    pub(crate) entries: usize,
    /// What the drill compared before, for the report only: credited redemptions in the
    /// catalog and gift-card entries in the ledger, in total.
    pub(crate) totals: (i64, i64),
}

/// The ledger's entries since `baseline` against what the load was answered 200 for, and
/// what its unanswered requests may have left, per reference ([`credits::compare`]).
async fn by_reference(
    observed: &Snapshot,
    new_primary: &dyn Fn(&str) -> String,
    baseline: i64,
) -> ByReference {
    let points = new_primary("points");
    let mut acknowledged = Vec::new();
    for order in &observed.orders {
        let reference = format!("order:{}", order.id);
        acknowledged.push(Movement::new(
            &reference,
            "gift_sent",
            order.payer,
            &format!("-{}", order.price),
        ));
        acknowledged.push(Movement::new(
            &reference,
            "gift_received",
            order.friend,
            &order.points,
        ));
    }
    for (client, code) in &observed.redeemed {
        acknowledged.push(Movement::new(
            &format!("gift-card:{code}"),
            "gift_card_credit",
            *client,
            CODE_POINTS,
        ));
    }
    // An order's key is claimed in the transaction that writes it: a key the ledger has
    // names the order an unanswered request made.
    let keys: HashMap<(i64, String), String> = rows(
        &points,
        "SELECT client_id::text, key, correlation_id::text FROM idempotency_keys \
         WHERE key LIKE 'failover-%'",
    )
    .await
    .into_iter()
    .map(|row| ((row[0].parse().unwrap(), row[1].clone()), row[2].clone()))
    .collect();
    let mut maybe = Vec::new();
    for (payer, friend, key) in &observed.unanswered {
        if let Some(id) = keys.get(&(*payer, key.clone())) {
            let reference = format!("order:{id}");
            maybe.push(Movement::new(
                &reference,
                "gift_sent",
                *payer,
                &format!("-{OFFER_PRICE_POINTS}"),
            ));
            maybe.push(Movement::new(
                &reference,
                "gift_received",
                *friend,
                OFFER_POINTS,
            ));
        }
    }
    for (client, code) in &observed.tried {
        maybe.push(Movement::new(
            &format!("gift-card:{code}"),
            "gift_card_credit",
            *client,
            CODE_POINTS,
        ));
    }
    // Each redemption's two names (its credit reference, and `gift-card:<id>`), to its code's.
    let mut aliases = HashMap::new();
    for row in rows(
        &new_primary("catalog"),
        "SELECT 'gift-card:' || id, credit_reference, 'gift-card:' || code FROM gift_card_redemptions",
    )
    .await
    {
        aliases.insert(row[0].clone(), row[2].clone());
        aliases.insert(row[1].clone(), row[2].clone());
    }
    let ledger: Vec<Movement> = rows(
        &points,
        &format!(
            "SELECT COALESCE('order:' || order_correlation_id::text, reference, 'entry:' || id), \
                    kind, client_id::text, points::text \
             FROM point_entries WHERE id > {baseline} ORDER BY id"
        ),
    )
    .await
    .into_iter()
    .map(|row| {
        Movement::new(
            &credits::canonical(&row[0], &aliases),
            &row[1],
            row[2].parse().unwrap(),
            &row[3],
        )
    })
    .collect();
    let totals = (
        money::count(
            &new_primary("catalog"),
            "SELECT count(*) AS n FROM gift_card_redemptions WHERE status = 'credited'",
        )
        .await,
        money::count(
            &points,
            "SELECT count(*) AS n FROM point_entries WHERE reference LIKE 'gift-card:%'",
        )
        .await,
    );
    ByReference {
        lines: credits::compare(&acknowledged, &maybe, &ledger),
        acknowledged: acknowledged.len(),
        maybe: maybe.len(),
        entries: ledger.len(),
        totals,
    }
}

/// Makes the money wrong on purpose, after the load and before the checks, as
/// `DRILL_PLANT` says: `double` credits the first acknowledged gift code again under its
/// redemption's id (`gift-card:<id>`, as an order service of the release before would), with
/// its internal-credit record; `missing` deletes the second one's credit and record. The
/// balances follow, so the audit and the old totals (credited redemptions against gift-card
/// entries) still agree: only the per-reference comparison sees it. Returns what it did.
pub(crate) async fn plant(
    redeemed: &[(i64, String)],
    new_primary: &dyn Fn(&str) -> String,
) -> Vec<String> {
    let (double, missing) = e2e::drill_plant::plants();
    let mut planted = Vec::new();
    let points = new_primary("points");
    if double {
        let (client, code) = &redeemed[0];
        let id = &rows(
            &new_primary("catalog"),
            &format!("SELECT id FROM gift_card_redemptions WHERE code = '{code}'"),
        )
        .await[0][0];
        rows(
            &points,
            &format!(
                "BEGIN;
                 UPDATE point_accounts SET balance = balance + {CODE_POINTS} WHERE client_id = {client};
                 INSERT INTO point_entries (client_id, kind, points, reference)
                 VALUES ({client}, 'gift_card_credit', {CODE_POINTS}, 'gift-card:{id}');
                 INSERT INTO internal_credits (reference, client_id, points, reason, balance_after)
                 SELECT 'gift-card:{id}', {client}, {CODE_POINTS}, 'gift_card', balance
                 FROM point_accounts WHERE client_id = {client};
                 COMMIT;"
            ),
        )
        .await;
        planted.push(format!(
            "double: gift-card:{code} credited again to {client} under gift-card:{id}"
        ));
    }
    if missing {
        let (client, code) = &redeemed[1];
        rows(
            &points,
            &format!(
                "BEGIN;
                 SET LOCAL session_replication_role = replica;
                 WITH e AS (DELETE FROM point_entries WHERE reference = 'gift-card:{code}'
                            RETURNING client_id, points)
                 UPDATE point_accounts a SET balance = a.balance - e.points
                 FROM e WHERE a.client_id = e.client_id;
                 DELETE FROM internal_credits WHERE reference = 'gift-card:{code}';
                 COMMIT;"
            ),
        )
        .await;
        planted.push(format!(
            "missing: the credit of gift-card:{code} to {client} deleted"
        ));
    }
    planted
}

pub(crate) async fn verify(
    load: &Load,
    stack: &Stack,
    new_primary: &dyn Fn(&str) -> String,
    killed: Instant,
    baseline: i64,
) -> (Vec<String>, ByReference) {
    let mut failures = Vec::new();
    let snapshot = {
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
        Snapshot {
            orders: observed.orders.clone(),
            unanswered: observed.unanswered.clone(),
            redeemed: observed.redeemed.clone(),
            tried: observed.tried.clone(),
        }
    };
    let (orders, redeemed) = (&snapshot.orders, &snapshot.redeemed);
    failures.truncate(20);
    // Every acknowledged order exists, successful, on the new primary (through the
    // services; its ledger entries are compared per reference below).
    let http = reqwest::Client::new();
    for order in orders {
        let (token, id) = (order.token, &order.id);
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
    for (_, code) in redeemed {
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
    // Money, per reference: a double credit and a lost one must not cancel out.
    let compared = by_reference(&snapshot, new_primary, baseline).await;
    for line in &compared.lines {
        failures.push(format!("ledger by reference: {line}"));
    }
    let audit = run("point-service", &["audit"], &new_primary("points"), &[]).await;
    if !audit.status.success() {
        failures.push(format!(
            "point-service audit failed: {}{}",
            String::from_utf8_lossy(&audit.stdout),
            String::from_utf8_lossy(&audit.stderr)
        ));
    }
    (failures, compared)
}

pub(crate) fn report(
    observed: &Observed,
    engine: &str,
    mode: Mode,
    event: &Event,
    back: Instant,
    compared: &ByReference,
    failures: &[String],
) {
    let (killed, promoted) = (event.at, event.recovered);
    let before = observed.orders.iter().filter(|o| o.at < killed).count();
    println!("## Failover on {engine}: the {}", mode.what());
    println!();
    for note in &event.notes {
        println!("- {note}");
    }
    println!(
        "- {} {} ms after the event; writes succeeded again {:.1} s after the event",
        if mode == Mode::StandbyLost {
            "standby started again"
        } else {
            "new primary taking writes"
        },
        promoted.duration_since(killed).as_millis(),
        back.duration_since(killed).as_secs_f64()
    );
    println!(
        "- point orders acknowledged: {before} before the kill, {} after; every one found \
         successful on the new primary: {}",
        observed.orders.len() - before,
        if failures.iter().any(|f| f.starts_with("order ")) {
            "no"
        } else {
            "yes"
        }
    );
    println!(
        "- gift codes answered 200: {}; asked for and never answered 200: {}",
        observed.redeemed.len(),
        observed.tried.len()
    );
    println!(
        "- the ledger by reference: {} movements acknowledged (each must be there once), {} \
         that unanswered requests may have made (at most once), {} entries written since the \
         load began: {}",
        compared.acknowledged,
        compared.maybe,
        compared.entries,
        match compared.lines.len() {
            0 => "no difference".to_owned(),
            n => format!("{n} difference(s)"),
        }
    );
    for line in &compared.lines {
        println!("  - {}", line.replace('\t', "  "));
    }
    let (credited, entries) = compared.totals;
    println!(
        "- the totals the drill used to compare (not a check now): {credited} credited \
         redemptions, {entries} gift-card ledger entries: {}",
        if credited == entries {
            "equal"
        } else {
            "not equal"
        }
    );
    println!(
        "- longest time without an acknowledged point order, from the event to 5 s after the \
         writes were back: {:.1} s",
        longest_pause(observed, killed, back + Duration::from_secs(5)).as_secs_f64()
    );
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
        println!(
            "- audit passed, no gift code pending, every acknowledged credit once by reference and \
             nothing else: every check held"
        );
    } else {
        println!("FAILED:");
        for failure in failures {
            println!("- {failure}");
        }
    }
}

/// The longest stretch in `[from, to]` with no point order answered 200: the writes' pause,
/// whatever the engine said (a switchover's old leader answers until it steps down).
fn longest_pause(observed: &Observed, from: Instant, to: Instant) -> Duration {
    let mut acknowledged: Vec<Instant> = observed
        .answers
        .iter()
        .filter(|a| a.action == "point order" && a.status == 200 && a.came > from && a.came < to)
        .map(|a| a.came)
        .collect();
    acknowledged.sort();
    acknowledged.push(to);
    let mut last = from;
    let mut longest = Duration::ZERO;
    for at in acknowledged {
        longest = longest.max(at.duration_since(last));
        last = at;
    }
    longest
}
