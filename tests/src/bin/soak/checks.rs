//! After the load: everything up again, then the checks of the ledger, the card orders, the
//! unapplied captures and the gift codes.

use std::time::{Duration, Instant};

use e2e::run;
use e2e::stack::Databases;

use crate::load::{Soak, System};

/// Everything up again, then the checks; returns what failed.
pub(crate) async fn verify(soak: &Soak, databases: &Databases) -> Vec<String> {
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
    let (successful, approved, redeemed, unexpected) = {
        let observed = soak.observed.lock().unwrap();
        (
            observed.successful.clone(),
            observed.approved.clone(),
            observed.redeemed.clone(),
            observed.unexpected.clone(),
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
pub(crate) struct Count {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    n: i64,
}

#[derive(diesel::QueryableByName)]
pub(crate) struct Text {
    #[diesel(sql_type = diesel::sql_types::Text)]
    text: String,
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
