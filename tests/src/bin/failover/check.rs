//! After the load: what must hold on the new primary, and the figures.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use e2e::money;
use e2e::run;
use e2e::stack::Stack;

use crate::load::{Load, Observed, specified};
use crate::{Event, Mode};

pub(crate) async fn verify(
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

pub(crate) fn report(
    observed: &Observed,
    engine: &str,
    mode: Mode,
    event: &Event,
    back: Instant,
    failures: &[String],
) {
    let (killed, promoted) = (event.at, event.recovered);
    let before = observed
        .orders
        .iter()
        .filter(|(_, _, at)| *at < killed)
        .count();
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
         successful on the new primary with its two ledger entries: {}",
        observed.orders.len() - before,
        if failures.iter().any(|f| f.starts_with("order ")) {
            "no"
        } else {
            "yes"
        }
    );
    println!("- gift codes answered 200: {}", observed.redeemed.len());
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
        println!("- audit passed, no gift code pending, every credit once: every check held");
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
