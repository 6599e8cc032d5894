//! The point service killed (SIGKILL, as a crash or an OOM kill) while spends are in flight
//! through the order service: the relay answers 502 in envelope B while it is gone, serves
//! again as soon as it is back (no restart of the order service), and no spend is lost or
//! half-applied: retrying every request with its idempotency key settles each one exactly
//! once, the balance is the opening balance minus one price per order, and `point-service
//! audit` finds every ledger invariant intact.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use e2e::demo::{NOURA, OFFER_100, SARA};
use e2e::stack::Stack;
use e2e::{DemoDatabases, run};
use futures_util::future::join_all;
use serde_json::json;

/// How many sessions of the points database wait on a lock on the accounts (a spend
/// waiting for the account row the test holds). Asked outside a transaction: within one,
/// `pg_stat_activity` stays as it was at its first read.
async fn spends_waiting_on_a_lock(watcher: &tokio_postgres::Client) -> i64 {
    watcher
        .query_one(
            "SELECT count(*) FROM pg_stat_activity \
             WHERE datname = current_database() AND pid <> pg_backend_pid() \
               AND wait_event_type = 'Lock' AND query ILIKE '%point_accounts%'",
            &[],
        )
        .await
        .unwrap()
        .get(0)
}

/// What Sara's account holds in the demo fixture, and what the offer costs her in points.
const OPENING_TENTHS: i64 = 6305;
const PRICE_TENTHS: i64 = 1200;

#[tokio::test]
async fn a_crashed_point_service_gives_502_then_recovers_without_losing_a_point() {
    // The databases live as long as the test (bound, not dropped).
    let databases = DemoDatabases::create("crash").await;
    let mut stack = Stack::start(&databases.urls()).await;
    let points_db = &databases.points;
    let orders = format!("{}/api/v2/client/point-orders", stack.order.base);
    let balance = format!("{}/api/v2/client/points", stack.order.base);
    let gift = json!({"point_offer_id": OFFER_100, "to_client_id": 1002, "payment_type": "point"});
    let keys: Vec<String> = (0..4).map(|i| format!("crash-{i}")).collect();

    // Four spends in flight, and the point service killed under them, at a point proven to
    // be inside a spend: the test holds Sara's account row, so each spend that gets that far
    // has claimed its idempotency key in its transaction and waits for her row's lock; the
    // crash comes once PostgreSQL shows one waiting so.
    let (holder, connection) = tokio_postgres::connect(points_db.url(), tokio_postgres::NoTls)
        .await
        .unwrap();
    let holder_task = tokio::spawn(connection);
    holder
        .batch_execute("BEGIN; SELECT 1 FROM point_accounts WHERE client_id = 1001 FOR UPDATE")
        .await
        .unwrap();
    let spends = join_all(keys.iter().map(|key| {
        let (stack, gift, orders) = (&stack, &gift, &orders);
        async move {
            let key = [("Idempotency-Key", key.as_str())];
            stack
                .call("POST", orders, Some(SARA), &key, Some(gift))
                .await
        }
    }));
    let (watcher, connection) = tokio_postgres::connect(points_db.url(), tokio_postgres::NoTls)
        .await
        .unwrap();
    let watcher_task = tokio::spawn(connection);
    let crash = async {
        let deadline = Instant::now() + Duration::from_secs(30);
        while spends_waiting_on_a_lock(&watcher).await == 0 {
            assert!(
                Instant::now() < deadline,
                "no spend reached Sara's account within 30 s"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        stack.points.crash();
    };
    let (answers, ()) = tokio::join!(spends, crash);
    // Every answer is in: the process is gone. Its transactions end with it (PostgreSQL
    // rolls back a transaction whose client is gone), whatever they had claimed.
    holder.batch_execute("ROLLBACK").await.unwrap();
    drop((holder, watcher));
    let _ = tokio::join!(holder_task, watcher_task);
    // None could finish before the crash (each needs the row the test held until now):
    // each is the relay's 502, the crash cutting it inside the point service or its call
    // finding the point service gone.
    for (status, body) in &answers {
        assert!(
            *status == 502 && body["error"]["code"] == "POINT_SERVICE_UNAVAILABLE",
            "{status} {body}"
        );
    }

    // While it is gone: 502 in envelope B, at once.
    let (status, body) = stack.call("GET", &balance, Some(SARA), &[], None).await;
    assert_eq!(status, 502);
    assert_eq!(body["success"], false);
    assert_eq!(body["error"]["code"], "POINT_SERVICE_UNAVAILABLE");

    // Back on its port: the same order service serves again.
    stack.start_points_again().await;
    let (status, _) = stack.call("GET", &balance, Some(SARA), &[], None).await;
    assert_eq!(status, 200);

    // Every request retried with its key: one order per key, each successful.
    each_key_makes_one_order(&stack, &keys, &gift).await;

    // And the ledger's own invariants hold (`point-service audit`, the binary).
    let audit = run("point-service", &["audit"], points_db.url(), &[]).await;
    let report = String::from_utf8_lossy(&audit.stdout);
    assert!(
        audit.status.success(),
        "{report}{}",
        String::from_utf8_lossy(&audit.stderr)
    );
    // Every check passed (the audit stops at the first violation); the nine this test was
    // written against at least, as checks are only ever added.
    assert!(
        report.lines().filter(|l| l.starts_with("ok: ")).count() >= 9,
        "{report}"
    );
}

/// Waits until the point service's batchers hold `n` orders waiting for a batch.
async fn queued(stack: &Stack, n: f64) {
    let http = reqwest::Client::new();
    testkit::metrics::wait_for(&http, &stack.points.base, "point_order_batch_queue", n).await;
}

/// A batch of point orders is written in one transaction (`orders::batches`), and the point
/// service is killed while it is: its orders had claimed their keys and written their accounts,
/// and waited for Sara's account row, which the test holds. The order answered before the
/// crash stands; none of the batch's is applied, and each is made exactly once when retried.
#[tokio::test]
async fn killed_mid_batch_nothing_acknowledged_is_lost_and_nothing_unacknowledged_applied() {
    // The databases live as long as the test (bound, not dropped).
    let databases = DemoDatabases::create("crash_batch").await;
    let mut stack = Stack::start(&databases.urls()).await;
    let points_db = &databases.points;
    let orders = format!("{}/api/v2/client/point-orders", stack.order.base);
    let gift = json!({"point_offer_id": OFFER_100, "to_client_id": 1002, "payment_type": "point"});
    let keys: Vec<String> = (0..4).map(|i| format!("batch-{i}")).collect();
    let (holder, connection) = tokio_postgres::connect(points_db.url(), tokio_postgres::NoTls)
        .await
        .unwrap();
    let holder_task = tokio::spawn(connection);
    let (watcher, connection) = tokio_postgres::connect(points_db.url(), tokio_postgres::NoTls)
        .await
        .unwrap();
    let watcher_task = tokio::spawn(connection);
    let lock_waits = async || {
        let deadline = Instant::now() + Duration::from_secs(30);
        while spends_waiting_on_a_lock(&watcher).await == 0 {
            assert!(
                Instant::now() < deadline,
                "no batch waits on a held account"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    };

    // Noura (1003) and Sara (1001) share a batcher (one per replica by default; with two, by
    // payer id, they still would). The test holds both their accounts: Noura's order is a
    // batch of one, waiting.
    holder
        .batch_execute(
            "BEGIN; SELECT 1 FROM point_accounts WHERE client_id IN (1001, 1003) \
             ORDER BY client_id FOR UPDATE",
        )
        .await
        .unwrap();
    let stack_ref = &stack;
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap();
    let acknowledged = tokio::spawn({
        let (http, url) = (http.clone(), orders.clone());
        let gift = gift.clone();
        async move {
            e2e::stack::call(
                &http,
                "POST",
                &url,
                Some(NOURA),
                &[("Idempotency-Key", "noura")],
                Some(&gift),
            )
            .await
        }
    });
    lock_waits().await;
    // Sara's four orders queue behind it, one at a time, so they are the next batch.
    let mut spends = Vec::new();
    for (n, key) in keys.iter().enumerate() {
        let (http, url, gift, key) = (http.clone(), orders.clone(), gift.clone(), key.clone());
        spends.push(tokio::spawn(async move {
            e2e::stack::call(
                &http,
                "POST",
                &url,
                Some(SARA),
                &[("Idempotency-Key", &key)],
                Some(&gift),
            )
            .await
        }));
        queued(stack_ref, (n + 1) as f64).await;
    }
    // Noura's account let go: her batch commits and is answered; Sara's batch, all four (the
    // queue is empty), then claims its keys and waits for her row.
    holder
        .batch_execute(
            "COMMIT; BEGIN; SELECT 1 FROM point_accounts WHERE client_id = 1001 FOR UPDATE",
        )
        .await
        .unwrap();
    let (status, noura_order) = acknowledged.await.unwrap();
    assert_eq!(
        (status, noura_order["status"].as_str()),
        (200, Some("successful")),
        "{noura_order}"
    );
    queued(stack_ref, 0.0).await;
    lock_waits().await;
    stack.points.crash();
    for spend in spends {
        let (status, body) = spend.await.unwrap();
        assert!(
            status == 502 && body["error"]["code"] == "POINT_SERVICE_UNAVAILABLE",
            "{status} {body}"
        );
    }
    holder.batch_execute("ROLLBACK").await.unwrap();

    // Nothing of the batch is in the database: no order, no key, no entry of Sara's.
    let count = async |sql: &str| -> i64 { watcher.query_one(sql, &[]).await.unwrap().get(0) };
    assert_eq!(
        count("SELECT count(*) FROM point_orders WHERE payer_id = 1001 AND payment_type = 'point'")
            .await,
        0
    );
    assert_eq!(
        count("SELECT count(*) FROM idempotency_keys WHERE client_id = 1001").await,
        0
    );
    assert_eq!(
        count("SELECT count(*) FROM point_entries WHERE client_id = 1001 AND kind = 'gift_sent'")
            .await,
        0
    );
    // The order answered before the crash is there, as answered.
    let noura_id = noura_order["correlation_id"].as_str().unwrap();
    assert_eq!(
        count(&format!(
            "SELECT count(*) FROM point_orders \
             WHERE correlation_id = '{noura_id}' AND status = 'successful'"
        ))
        .await,
        1
    );
    drop((holder, watcher));
    let _ = tokio::join!(holder_task, watcher_task);

    // Retried with their keys: one order each, Sara charged once per order.
    stack.start_points_again().await;
    each_key_makes_one_order(&stack, &keys, &gift).await;
    let audit = run("point-service", &["audit"], points_db.url(), &[]).await;
    assert!(
        audit.status.success(),
        "{}",
        String::from_utf8_lossy(&audit.stdout)
    );
}

/// Sends each of Sara's orders again with its key: each makes one order, successful, and her
/// balance is her opening balance less one price per key.
async fn each_key_makes_one_order(stack: &Stack, keys: &[String], gift: &serde_json::Value) {
    let orders = format!("{}/api/v2/client/point-orders", stack.order.base);
    let mut correlation_ids = BTreeSet::new();
    for key in keys {
        let (status, body) = stack
            .call(
                "POST",
                &orders,
                Some(SARA),
                &[("Idempotency-Key", key)],
                Some(gift),
            )
            .await;
        assert_eq!(
            (status, body["status"].as_str()),
            (200, Some("successful")),
            "{body}"
        );
        correlation_ids.insert(body["correlation_id"].as_str().unwrap().to_owned());
    }
    assert_eq!(correlation_ids.len(), keys.len());
    let balance = format!("{}/api/v2/client/points", stack.order.base);
    let (_, body) = stack.call("GET", &balance, Some(SARA), &[], None).await;
    let expected = OPENING_TENTHS - PRICE_TENTHS * keys.len() as i64;
    assert_eq!(
        body["points"],
        format!("{}.{}", expected / 10, expected % 10),
        "each order charged exactly once"
    );
}
