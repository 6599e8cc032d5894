//! The point service killed (SIGKILL, as a crash or an OOM kill) while spends are in flight
//! through the order service: the relay answers 502 in envelope B while it is gone, serves
//! again as soon as it is back (no restart of the order service), and no spend is lost or
//! half-applied: retrying every request with its idempotency key settles each one exactly
//! once, the balance is the opening balance minus one price per order, and `point-service
//! audit` finds every ledger invariant intact.

use std::collections::BTreeSet;
use std::time::Duration;

use e2e::demo::{OFFER_100, SARA};
use e2e::stack::{Databases, Stack};
use e2e::{demo_database, run};
use futures_util::future::join_all;
use serde_json::json;

/// What Sara's account holds in the demo fixture, and what the offer costs her in points.
const OPENING_TENTHS: i64 = 6305;
const PRICE_TENTHS: i64 = 1200;

#[tokio::test]
async fn a_crashed_point_service_gives_502_then_recovers_without_losing_a_point() {
    let auth_db = demo_database(&["auth-service"], "auth").await;
    let points_db = demo_database(&["point-service"], "points").await;
    let catalog_db = demo_database(&["order-service", "operator-service"], "catalog").await;
    let mut stack = Stack::start(&Databases {
        auth: auth_db.url().to_owned(),
        points: points_db.url().to_owned(),
        catalog: catalog_db.url().to_owned(),
    })
    .await;
    let orders = format!("{}/api/v2/client/point-orders", stack.order.base);
    let balance = format!("{}/api/v2/client/points", stack.order.base);
    let gift = json!({"point_offer_id": OFFER_100, "to_client_id": 1002, "payment_type": "point"});
    let keys: Vec<String> = (0..4).map(|i| format!("crash-{i}")).collect();

    // Four spends in flight, and the point service killed under them.
    let spends = join_all(keys.iter().map(|key| {
        let (stack, gift, orders) = (&stack, &gift, &orders);
        async move {
            let key = [("Idempotency-Key", key.as_str())];
            stack
                .call("POST", orders, Some(SARA), &key, Some(gift))
                .await
        }
    }));
    let crash = async {
        tokio::time::sleep(Duration::from_millis(5)).await;
        stack.points.crash();
    };
    let (answers, ()) = tokio::join!(spends, crash);
    for (status, body) in &answers {
        assert!(
            *status == 200
                || (*status == 502 && body["error"]["code"] == "POINT_SERVICE_UNAVAILABLE"),
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
    let mut correlation_ids = BTreeSet::new();
    for key in &keys {
        let (status, body) = stack
            .call(
                "POST",
                &orders,
                Some(SARA),
                &[("Idempotency-Key", key)],
                Some(&gift),
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
    let (_, body) = stack.call("GET", &balance, Some(SARA), &[], None).await;
    let expected = OPENING_TENTHS - PRICE_TENTHS * keys.len() as i64;
    assert_eq!(
        body["points"],
        format!("{}.{}", expected / 10, expected % 10),
        "each order charged exactly once"
    );

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
