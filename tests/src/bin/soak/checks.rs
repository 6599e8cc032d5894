//! After the load: everything up again, then the checks of the ledger, the card orders, the
//! unapplied captures, the gift codes, every payment the sandbox captured against the ledger
//! (with `point-service reconcile`), and what became of the late-lost orders.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::{Duration, Instant};

use chrono::NaiveDate;
use e2e::run;
use e2e::stack::Databases;

use crate::load::{LateLost, Soak, System};

/// How long the checks wait for the payment sync to leave no captured order open. The sync
/// itself is quick (`POINTS_ENV`), but an order whose sync failed half-way (the point service
/// or PostgreSQL killed under it) waits out the order lease its taking set (300 s,
/// `payment_sync::task`), and a point service killed while it led the sync holds the sync
/// lease for the interval plus twice a pay call's window (82 s) after its death.
const SETTLE_WITHIN: Duration = Duration::from_secs(330);

/// What the payment checks found, for the report.
#[derive(Default)]
pub(crate) struct Payments {
    /// Each UTC day the load ran on, and how many captures its settlement holds.
    pub(crate) days: Vec<(NaiveDate, usize)>,
    /// `payment_captured` events applied (outcome `captured`) from a webhook (or the soak's
    /// events in the gateway's place) and from the payment sync (`sync:…` ids).
    pub(crate) credited_by_webhook: i64,
    pub(crate) credited_by_sync: i64,
    /// Captures listed for refund (`unapplied_captures`).
    pub(crate) listed: i64,
    /// How long the checks waited until no order with a captured payment was open.
    pub(crate) settled_after: Duration,
    /// Each day's `point-service reconcile` summary line.
    pub(crate) reconciled: Vec<String>,
    /// The late-lost orders, by the outcome their card asks for.
    pub(crate) late_captured: LateTally,
    pub(crate) late_declined: LateTally,
}

/// What became of one kind of late-lost order.
#[derive(Default)]
pub(crate) struct LateTally {
    /// Pays sent with the card.
    pub(crate) sent: u64,
    /// By what the pay answered (`500` is the expected one).
    pub(crate) answered: BTreeMap<String, u64>,
    /// Orders whose payment the sandbox made (the call reached it).
    pub(crate) made: u64,
    /// Orders whose pay never reached the sandbox (no attempt recorded, or no payment by
    /// the time it was due): nothing to check.
    pub(crate) not_made: u64,
    /// Of those made: credited once (captured), or `payment_failed` with nothing credited
    /// (declined).
    pub(crate) decided: u64,
    /// Of those made: listed by `point-service unsynced-orders` instead.
    pub(crate) listed: u64,
    /// Of those made: neither (each is a failure).
    pub(crate) neither: u64,
}

/// A late-lost order whose payment the sandbox made: the payment's id and status.
struct LateMade {
    order: LateLost,
    payment: String,
    status: String,
}

/// Everything up again, then the checks; returns what failed and what the payment checks
/// found.
pub(crate) async fn verify(soak: &Soak, databases: &Databases) -> (Vec<String>, Payments) {
    let mut failures = Vec::new();
    match &soak.system {
        System::One(stack) => {
            let stack = stack.read().await;
            for service in [&stack.auth, &stack.points, &stack.order, &stack.operator] {
                service
                    .wait_until(Duration::from_secs(60), |s| s == 200, "/readyz")
                    .await;
            }
        }
        System::Replicated { stack, .. } => stack.lock().await.balancer.wait_all_up().await,
    }
    let (successful, approved, redeemed, unexpected, wrong) = {
        let observed = soak.observed.lock().unwrap();
        (
            observed.successful.clone(),
            observed.approved.clone(),
            observed.redeemed.clone(),
            observed.unexpected.clone(),
            observed.wrong.clone(),
        )
    };

    let orders = format!("{}/api/v2/client/point-orders", soak.order_base().await);
    let get = async |token: &str, url: String| {
        e2e::stack::call(&soak.http, "GET", &url, Some(token), &[], None).await
    };
    for (token, id) in &successful {
        let (status, order) = get(token, format!("{orders}/{id}")).await;
        if status != 200 || order["status"] != "successful" {
            failures.push(format!(
                "point order {id} was answered successful, now: {status} {order}"
            ));
        }
    }
    // A capture the point service took is applied in the same transaction, so it is final.
    for (token, id) in &approved {
        let (status, order) = get(token, format!("{orders}/{id}")).await;
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
            let n: N = diesel::sql_query(
                "SELECT count(*) AS n FROM gift_card_redemptions \
                 WHERE code = $1 AND status = 'credited'",
            )
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
    let (payment_failures, payments) = check_payments(soak, databases).await;
    failures.extend(payment_failures);
    for line in unexpected.iter().take(20) {
        failures.push(format!("unspecified 5xx: {line}"));
    }
    for line in wrong.iter().take(20) {
        failures.push(format!("unexpected answer: {line}"));
    }
    let audit = run("point-service", &["audit"], &databases.points, &[]).await;
    if !audit.status.success() {
        failures.push(format!(
            "point-service audit failed: {}{}",
            String::from_utf8_lossy(&audit.stdout),
            String::from_utf8_lossy(&audit.stderr)
        ));
    }
    (failures, payments)
}

#[derive(diesel::QueryableByName)]
pub(crate) struct Count {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    n: i64,
}

#[derive(diesel::QueryableByName)]
pub(crate) struct Text {
    #[diesel(sql_type = diesel::sql_types::Text)]
    text: String,
}

#[derive(diesel::QueryableByName)]
pub(crate) struct TextCount {
    #[diesel(sql_type = diesel::sql_types::Text)]
    text: String,
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    n: i64,
}

pub(crate) async fn connect(url: &str) -> diesel_async::AsyncPgConnection {
    use diesel_async::AsyncConnection;
    diesel_async::AsyncPgConnection::establish(url)
        .await
        .unwrap()
}

/// Every redemption credited exactly once (the retry task drains what the kills left
/// pending), none pending, and no rush code answered 200 more than once.
pub(crate) async fn check_gift_codes(soak: &Soak, databases: &Databases) -> Vec<String> {
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
        "SELECT credit_reference AS text FROM gift_card_redemptions WHERE status = 'credited'",
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
pub(crate) async fn check_card_orders(soak: &Soak, databases: &Databases) -> Vec<String> {
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
    let orders = format!("{}/api/v2/client/point-orders", soak.order_base().await);
    for (token, id, payment) in &unapplied {
        if !listing
            .lines()
            .any(|l| l.contains(id.as_str()) && l.contains(payment.as_str()))
        {
            failures.push(format!(
                "the capture of {payment} (order {id}) after its decline is not listed"
            ));
        }
        let (_, order) = e2e::stack::call(
            &soak.http,
            "GET",
            &format!("{orders}/{id}"),
            Some(token),
            &[],
            None,
        )
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

/// A payment in the sandbox's settlement of a day.
#[derive(Debug, Clone)]
struct Capture {
    id: String,
    /// The order's correlation id, as the point service sent it.
    reference: String,
}

/// Every page of `day`'s settlement at the sandbox (`GET /v1/settlements/<day>?cursor=`).
async fn settlement(soak: &Soak, sandbox: &str, day: NaiveDate) -> Result<Vec<Capture>, String> {
    let mut captures = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        pages += 1;
        if pages > 10_000 {
            return Err(format!("the settlement of {day} has no last page"));
        }
        let url = match &cursor {
            // The cursor is hex: nothing to escape.
            Some(cursor) => format!("{sandbox}/v1/settlements/{day}?cursor={cursor}"),
            None => format!("{sandbox}/v1/settlements/{day}"),
        };
        let (status, page) = e2e::stack::call(&soak.http, "GET", &url, None, &[], None).await;
        let Some(data) = page["data"].as_array().filter(|_| status == 200) else {
            return Err(format!("GET {url}: {status} {page}"));
        };
        for entry in data {
            match (entry["id"].as_str(), entry["reference"].as_str()) {
                (Some(id), Some(reference)) => captures.push(Capture {
                    id: id.to_owned(),
                    reference: reference.to_owned(),
                }),
                _ => {
                    return Err(format!(
                        "GET {url}: an entry without id or reference: {entry}"
                    ));
                }
            }
        }
        match page["next"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None if page["next"].is_null() => return Ok(captures),
            None => return Err(format!("GET {url}: next is neither a cursor nor null")),
        }
    }
}

/// The UTC days from the load's first to today, each once.
fn days_since(first: NaiveDate) -> Vec<NaiveDate> {
    let today = chrono::Utc::now().date_naive();
    first.iter_days().take_while(|d| *d <= today).collect()
}

/// The settlement of every day since the load began, by day.
async fn settlements(soak: &Soak, sandbox: &str) -> Result<Vec<(NaiveDate, Vec<Capture>)>, String> {
    let mut all = Vec::new();
    for day in days_since(soak.started_on) {
        all.push((day, settlement(soak, sandbox, day).await?));
    }
    Ok(all)
}

/// Of the orders `references` name, the ones still `initial_order`.
async fn still_open(
    points: &mut diesel_async::AsyncPgConnection,
    references: &[uuid::Uuid],
) -> Vec<String> {
    use diesel::sql_types::{Array, Uuid as SqlUuid};
    use diesel_async::RunQueryDsl;
    let open: Vec<Text> = diesel::sql_query(
        "SELECT correlation_id::text AS text FROM point_orders \
         WHERE status = 'initial_order' AND correlation_id = ANY($1) ORDER BY 1",
    )
    .bind::<Array<SqlUuid>, _>(references)
    .load(points)
    .await
    .unwrap();
    open.into_iter().map(|t| t.text).collect()
}

/// Where the payment sync stands with the open orders `open` names, in one line: when they
/// are due and why they are not final yet.
async fn sync_state(points: &mut diesel_async::AsyncPgConnection, open: &[String]) -> String {
    use diesel::sql_types::{Array, Uuid as SqlUuid};
    use diesel_async::RunQueryDsl;
    let ids: Vec<uuid::Uuid> = open.iter().filter_map(|o| o.parse().ok()).collect();
    let state: Text = diesel::sql_query(
        "SELECT format('synced: %s of them, due in %s to %s s, tries up to %s; lease: %s; last errors: %s', \
                count(*), \
                round(min(extract(epoch FROM due_at - now()))), \
                round(max(extract(epoch FROM due_at - now()))), \
                max(tries), \
                (SELECT string_agg(holder || ' until ' || round(extract(epoch FROM until - now())) || ' s', ', ') \
                 FROM worker_leases WHERE name = 'payment-sync'), \
                string_agg(DISTINCT coalesce(last_error, '-'), ' | ')) AS text \
         FROM payment_syncs WHERE correlation_id = ANY($1)",
    )
    .bind::<Array<SqlUuid>, _>(&ids)
    .get_result(points)
    .await
    .unwrap();
    state.text
}

/// `SELECT <key> AS text, count(*) AS n … GROUP BY 1` as a map.
async fn counts(points: &mut diesel_async::AsyncPgConnection, sql: &str) -> HashMap<String, i64> {
    use diesel_async::RunQueryDsl;
    let rows: Vec<TextCount> = diesel::sql_query(sql).load(points).await.unwrap();
    rows.into_iter().map(|r| (r.text, r.n)).collect()
}

impl Payments {
    fn late(&mut self, declined: bool) -> &mut LateTally {
        if declined {
            &mut self.late_declined
        } else {
            &mut self.late_captured
        }
    }
}

/// The late-lost orders whose pay call may have reached the sandbox: those with a pay attempt
/// recorded (the attempt is written before the call); the others are counted as never made.
/// Read from the database only: a read by reference at the sandbox would make a held
/// payment, which only the point service's own first read may do.
async fn late_tried(
    soak: &Soak,
    points: &mut diesel_async::AsyncPgConnection,
    payments: &mut Payments,
) -> Vec<LateLost> {
    use diesel::sql_types::Uuid as SqlUuid;
    use diesel_async::RunQueryDsl;
    let late = soak.observed.lock().unwrap().late_lost.clone();
    let mut tried = Vec::new();
    for order in late {
        let tally = payments.late(order.declined);
        tally.sent += 1;
        *tally.answered.entry(order.answered.clone()).or_default() += 1;
        let attempts: Count = diesel::sql_query(
            "SELECT count(*) AS n FROM payment_attempts WHERE correlation_id = $1",
        )
        .bind::<SqlUuid, _>(order.id.parse::<uuid::Uuid>().unwrap())
        .get_result(points)
        .await
        .unwrap();
        if attempts.n == 0 {
            tally.not_made += 1;
        } else {
            tried.push(order);
        }
    }
    tried
}

/// After the wait: the payment the sandbox made for each late-lost order that may have
/// reached it, read by the order's reference. The sandbox makes it after the first such read
/// since the call, so a payment that turns up only after this read was never looked for by
/// the point service (a failure); none at all means the call never reached the sandbox,
/// which is a failure too when the pay answered 500 after the point service's whole wait
/// (the sandbox held that call).
async fn late_reads(
    soak: &Soak,
    sandbox: &str,
    tried: Vec<LateLost>,
    payments: &mut Payments,
) -> (Vec<LateMade>, Vec<String>) {
    let mut failures = Vec::new();
    let wait = Duration::from_millis(crate::points_setting("PAYMENT_SERVICE_TIMEOUT_MS"));
    let mut made = Vec::new();
    for order in tried {
        let url = format!("{sandbox}/v1/payments?reference={}", order.id);
        let mut first = true;
        let deadline = Instant::now() + Duration::from_secs(2);
        let found = loop {
            let (status, listed) = e2e::stack::call(&soak.http, "GET", &url, None, &[], None).await;
            match listed["data"]
                .as_array()
                .filter(|_| status == 200)
                .map(Vec::as_slice)
            {
                Some([payment]) => break Some((payment.clone(), first)),
                Some([]) if Instant::now() < deadline => {}
                Some([]) => break None,
                _ => {
                    failures.push(format!(
                        "GET {url}: {status} {listed} (one payment at most expected)"
                    ));
                    break None;
                }
            }
            first = false;
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        let tally = payments.late(order.declined);
        let Some((payment, looked_for)) = found else {
            tally.not_made += 1;
            if order.answered == "500" && order.took >= wait {
                failures.push(format!(
                    "the pay of late-lost order {} answered 500 after {} ms (the point service's \
                     wait ran out: the sandbox held the call), but the sandbox made no payment \
                     for it",
                    order.id,
                    order.took.as_millis()
                ));
            }
            continue;
        };
        let id = payment["id"].as_str().unwrap_or_default().to_owned();
        let status = payment["status"].as_str().unwrap_or_default().to_owned();
        let expected = if order.declined {
            "declined"
        } else {
            "captured"
        };
        if status != expected {
            failures.push(format!(
                "the sandbox made the late-lost payment {id} of order {} {status}, not {expected}",
                order.id
            ));
        }
        tally.made += 1;
        if !looked_for {
            tally.neither += 1;
            failures.push(format!(
                "late-lost order {}: the point service never read its payments back by \
                 reference within the checks' wait (the sandbox made its payment {id} only after \
                 the checks' own read)",
                order.id
            ));
            continue;
        }
        made.push(LateMade {
            order,
            payment: id,
            status,
        });
    }
    (made, failures)
}

/// Each late-lost order whose payment the sandbox made ended as the payment says: credited
/// once, by that payment (captured), or `payment_failed` with nothing credited (declined);
/// or it is listed by `point-service unsynced-orders`. `credited` counts the captures applied
/// by payment id.
async fn check_late_lost(
    databases: &Databases,
    points: &mut diesel_async::AsyncPgConnection,
    made: &[LateMade],
    credited: &HashMap<String, i64>,
    payments: &mut Payments,
) -> Vec<String> {
    use diesel::sql_types::Uuid as SqlUuid;
    use diesel_async::RunQueryDsl;
    #[derive(diesel::QueryableByName)]
    struct OrderState {
        #[diesel(sql_type = diesel::sql_types::Text)]
        status: String,
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        entries: i64,
        #[diesel(sql_type = diesel::sql_types::Text)]
        sync: String,
    }
    let mut failures = Vec::new();
    if made.is_empty() {
        return failures;
    }
    let unsynced = run(
        "point-service",
        &["unsynced-orders"],
        &databases.points,
        &[],
    )
    .await;
    if !unsynced.status.success() {
        failures.push(format!(
            "point-service unsynced-orders failed: {}",
            String::from_utf8_lossy(&unsynced.stderr)
        ));
    }
    // A header, one tab-separated line per listed order, then "<n> open".
    let listing = String::from_utf8_lossy(&unsynced.stdout).into_owned();
    let listed: BTreeSet<&str> = listing
        .lines()
        .skip(1)
        .filter(|l| l.contains('\t'))
        .filter_map(|l| l.split('\t').next())
        .collect();
    for late in made {
        let order = &late.order;
        let state: OrderState = diesel::sql_query(
            "SELECT o.status, \
                    (SELECT count(*) FROM point_entries e \
                     WHERE e.order_correlation_id = o.correlation_id) AS entries, \
                    coalesce((SELECT format('since %s, due %s, tries %s, listed %s, last error %s', \
                                            since, due_at, tries, listed_at, last_error) \
                              FROM payment_syncs s WHERE s.correlation_id = o.correlation_id), \
                             'none (the sync is done with it)') AS sync \
             FROM point_orders o WHERE o.correlation_id = $1",
        )
        .bind::<SqlUuid, _>(order.id.parse::<uuid::Uuid>().unwrap())
        .get_result(points)
        .await
        .unwrap();
        let times = credited.get(&late.payment).copied().unwrap_or(0);
        let decided = if order.declined {
            state.status == "payment_failed" && state.entries == 0 && times == 0
        } else {
            state.status == "successful" && state.entries == 1 && times == 1
        };
        let tally = payments.late(order.declined);
        if decided {
            tally.decided += 1;
        } else if listed.contains(order.id.as_str()) {
            tally.listed += 1;
        } else {
            tally.neither += 1;
            // At most 20 lines of each kind; the rest are counted.
            if tally.neither > 20 {
                continue;
            }
            failures.push(format!(
                "late-lost order {} ({} card, pay answered {} after {} ms; its payment {} made \
                 {} at the sandbox, with no webhook, after the point service's first read of \
                 the order's payments by reference, which found nothing) is {} with {} ledger \
                 entries, the payment credited {times} times, and it is not listed by \
                 unsynced-orders; its payment_syncs row: {}",
                order.id,
                if order.declined {
                    "latedecline"
                } else {
                    "latelost"
                },
                order.answered,
                order.took.as_millis(),
                late.payment,
                late.status,
                state.status,
                state.entries,
                state.sync
            ));
        }
    }
    let hidden: u64 = [&payments.late_captured, &payments.late_declined]
        .iter()
        .map(|t| t.neither.saturating_sub(20))
        .sum();
    if hidden > 0 {
        failures.push(format!(
            "… and {hidden} more late-lost orders neither decided nor listed"
        ));
    }
    failures
}

/// Every payment the sandbox captured on the days the load ran, against the ledger, once the
/// payment sync has had the time to apply what no webhook brought: no order with a captured
/// payment left `initial_order`; each capture credited exactly once (one `payment_captured`
/// event with outcome `captured` naming it, and one ledger entry for its order) or listed for
/// refund, never both and never neither; and `point-service reconcile --date` agreeing on
/// each day. The flows' own payments (silent cards, unknown-type events, late captures,
/// late-lost cards) must be in the settlement read, which checks the read itself. The
/// late-lost orders that may have reached the sandbox ([`late_tried`]) are waited for like
/// the orders of the captures read (their payments are made only once the payment sync
/// looks); after the wait their payments are read back ([`late_reads`]) and each order is
/// checked against its payment ([`check_late_lost`]).
pub(crate) async fn check_payments(soak: &Soak, databases: &Databases) -> (Vec<String>, Payments) {
    use diesel::sql_types::{Array, Uuid as SqlUuid};
    use diesel_async::RunQueryDsl;
    let mut failures = Vec::new();
    let mut payments = Payments::default();
    let sandbox = soak.sandbox_base().await;
    let mut points = connect(&databases.points).await;

    let late_tried = late_tried(soak, &mut points, &mut payments).await;

    // Wait until no order whose payment the sandbox captured, nor any late-lost order that
    // may have reached it, is still open. The load has stopped, so nothing more is captured
    // but the late-lost payments, which the payment sync's reads make: the settlement is read
    // once for the wait, and once more after it (the final word, with any day the wait
    // crossed into).
    let waiting = Instant::now();
    let days = match settlements(soak, &sandbox).await {
        Ok(days) => days,
        Err(e) => {
            failures.push(format!("the sandbox's settlement cannot be read: {e}"));
            return (failures, payments);
        }
    };
    let mut references = Vec::new();
    for capture in days.iter().flat_map(|(_, c)| c) {
        match capture.reference.parse::<uuid::Uuid>() {
            Ok(id) => references.push(id),
            Err(_) => failures.push(format!(
                "payment {} was captured for {:?}, which is no order's correlation id",
                capture.id, capture.reference
            )),
        }
    }
    references.extend(
        late_tried
            .iter()
            .filter_map(|l| l.id.parse::<uuid::Uuid>().ok()),
    );
    let mut next_note = Duration::from_secs(30);
    let open = loop {
        let open = still_open(&mut points, &references).await;
        if open.is_empty() || waiting.elapsed() > SETTLE_WITHIN {
            break open;
        }
        if waiting.elapsed() >= next_note {
            next_note += Duration::from_secs(30);
            eprintln!(
                "soak: {} orders with a captured payment still open after {} s; {}",
                open.len(),
                waiting.elapsed().as_secs(),
                sync_state(&mut points, &open).await
            );
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    };
    payments.settled_after = waiting.elapsed();
    let days = match settlements(soak, &sandbox).await {
        Ok(days) => days,
        Err(e) => {
            failures.push(format!("the sandbox's settlement cannot be read: {e}"));
            return (failures, payments);
        }
    };
    payments.days = days.iter().map(|(d, c)| (*d, c.len())).collect();
    // Only now may the checks read the late-lost orders by reference: a late-lost order with
    // no payment at the sandbox was never paid (its call never reached it) and may stay open.
    let late_ids: BTreeSet<String> = late_tried.iter().map(|l| l.id.clone()).collect();
    let (late_made, late_failures) = late_reads(soak, &sandbox, late_tried, &mut payments).await;
    failures.extend(late_failures);
    let made_ids: BTreeSet<&str> = late_made.iter().map(|l| l.order.id.as_str()).collect();
    let open: Vec<String> = open
        .into_iter()
        .filter(|o| !late_ids.contains(o) || made_ids.contains(o.as_str()))
        .collect();
    if !open.is_empty() {
        let ids: Vec<uuid::Uuid> = open.iter().filter_map(|o| o.parse().ok()).collect();
        let syncs: Vec<Text> = diesel::sql_query(
            "SELECT format('order %s: since %s, due %s, tries %s, listed %s, last error %s', \
                    correlation_id, since, due_at, tries, listed_at, last_error) AS text \
             FROM payment_syncs WHERE correlation_id = ANY($1) ORDER BY correlation_id",
        )
        .bind::<Array<SqlUuid>, _>(&ids)
        .load(&mut points)
        .await
        .unwrap();
        failures.push(format!(
            "{} orders whose payment the sandbox captured (or made late) are still initial_order \
             after {} s of waiting: {}; their payment_syncs rows: {}",
            open.len(),
            SETTLE_WITHIN.as_secs(),
            open.iter().take(20).cloned().collect::<Vec<_>>().join(", "),
            syncs
                .iter()
                .take(20)
                .map(|t| t.text.as_str())
                .collect::<Vec<_>>()
                .join("; ")
        ));
    }

    // Each capture credited exactly once or listed for refund.
    let credited = counts(
        &mut points,
        "SELECT payment_id AS text, count(*) AS n FROM payment_events \
         WHERE type = 'payment_captured' AND outcome = 'captured' AND payment_id IS NOT NULL \
         GROUP BY 1",
    )
    .await;
    let listed = counts(
        &mut points,
        "SELECT payment_id AS text, count(*) AS n FROM unapplied_captures \
         WHERE payment_id IS NOT NULL GROUP BY 1",
    )
    .await;
    let entries = counts(
        &mut points,
        "SELECT order_correlation_id::text AS text, count(*) AS n FROM point_entries \
         WHERE order_correlation_id IS NOT NULL GROUP BY 1",
    )
    .await;
    let undelivered = soak.observed.lock().unwrap().undelivered.clone();
    let mut problems = Vec::new();
    let mut seen = BTreeSet::new();
    for capture in days.iter().flat_map(|(_, c)| c) {
        if !seen.insert(capture.id.as_str()) {
            problems.push(format!("payment {} is in the settlement twice", capture.id));
            continue;
        }
        let order = capture
            .reference
            .parse::<uuid::Uuid>()
            .map_or_else(|_| capture.reference.clone(), |id| id.to_string());
        let times = credited.get(&capture.id).copied().unwrap_or(0);
        let listings = listed.get(&capture.id).copied().unwrap_or(0);
        let ledger = entries.get(&order).copied().unwrap_or(0);
        match (times, listings) {
            (1, 0) if ledger == 1 => {}
            (1, 0) => problems.push(format!(
                "payment {} is credited once but its order {order} has {ledger} ledger entries",
                capture.id
            )),
            (0, 1) => {}
            (0, 0) => problems.push(format!(
                "payment {} (order {order}) was captured but is neither credited nor listed for refund{}",
                capture.id,
                if undelivered.contains(&capture.id) {
                    " (its Approve button was pressed for 30 s and the point service never took its webhook)"
                } else {
                    ""
                }
            )),
            (times, listings) => problems.push(format!(
                "payment {} (order {order}) is credited {times} times and listed for refund {listings} times",
                capture.id
            )),
        }
    }
    // The flows' own captures must be in what was read.
    {
        let observed = soak.observed.lock().unwrap();
        let expected = observed
            .silent
            .iter()
            .map(|(order, payment)| (order, payment, "silent card"))
            .chain(
                observed
                    .unknown_type
                    .iter()
                    .map(|(order, payment)| (order, payment, "unknown-type event")),
            )
            .chain(
                observed
                    .unapplied
                    .iter()
                    .map(|(_, order, payment)| (order, payment, "capture after a decline")),
            )
            .chain(
                late_made
                    .iter()
                    .filter(|l| l.status == "captured")
                    .map(|l| (&l.order.id, &l.payment, "late-lost card")),
            );
        for (order, payment, flow) in expected {
            if !seen.contains(payment.as_str()) {
                problems.push(format!(
                    "payment {payment} (order {order}, {flow}) was captured but is in no settlement read"
                ));
            }
        }
    }
    if problems.len() > 20 {
        let more = problems.len() - 20;
        problems.truncate(20);
        problems.push(format!("… and {more} more"));
    }
    failures.extend(problems);
    failures.extend(
        check_late_lost(databases, &mut points, &late_made, &credited, &mut payments).await,
    );

    #[derive(diesel::QueryableByName)]
    struct Credits {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        webhook: i64,
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        sync: i64,
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        listed: i64,
    }
    let credits: Credits = diesel::sql_query(
        "SELECT count(*) FILTER (WHERE id NOT LIKE 'sync:%') AS webhook, \
                count(*) FILTER (WHERE id LIKE 'sync:%') AS sync, \
                (SELECT count(*) FROM unapplied_captures) AS listed \
         FROM payment_events WHERE type = 'payment_captured' AND outcome = 'captured'",
    )
    .get_result(&mut points)
    .await
    .unwrap();
    payments.credited_by_webhook = credits.webhook;
    payments.credited_by_sync = credits.sync;
    payments.listed = credits.listed;

    // The daily settlement check agrees on every day the load ran (today's so far).
    for (day, _) in &days {
        let date = day.to_string();
        let reconciled = run(
            "point-service",
            &["reconcile", "--date", &date],
            &databases.points,
            &[("PAYMENT_SERVICE_URL", &sandbox)],
        )
        .await;
        let stdout = String::from_utf8_lossy(&reconciled.stdout).into_owned();
        if reconciled.status.code() == Some(0) {
            // Its summary line; the service's JSON log lines share standard output.
            let summary = stdout
                .lines()
                .find(|l| l.starts_with("settlement "))
                .unwrap_or("(no summary line)");
            payments.reconciled.push(summary.to_owned());
        } else {
            failures.push(format!(
                "point-service reconcile --date {date} exited {:?}:\n{stdout}{}",
                reconciled.status.code(),
                String::from_utf8_lossy(&reconciled.stderr)
            ));
        }
    }
    (failures, payments)
}
