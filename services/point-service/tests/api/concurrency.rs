//! Fifty simultaneous point orders from one payer whose balance covers exactly seven.

use futures_util::future::join_all;

use crate::helpers::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fifty_simultaneous_orders_seven_covered_exactly_seven_succeed() {
    let app = spawn_app().await;
    // Noura gets exactly 7 × 120 points.
    app.sql(
        "INSERT INTO point_accounts (client_id) VALUES (1003); \
         INSERT INTO point_entries (client_id, kind, points) VALUES (1003, 'earn', 840); \
         UPDATE point_accounts SET balance = 840 WHERE client_id = 1003",
    )
    .await;
    let body = order_body(OMAR, "point");
    let attempts = (0..50).map(|_| app.order(NOURA, &body));
    let outcomes = join_all(attempts).await;
    let ok = outcomes.iter().filter(|(s, _)| *s == 200).count();
    let refused = outcomes
        .iter()
        .filter(|(s, b)| *s == 422 && b["error"]["code"] == "INSUFFICIENT_POINTS")
        .count();
    assert_eq!(
        (ok, refused),
        (7, 43),
        "{:?}",
        outcomes.iter().map(|(s, _)| s).collect::<Vec<_>>()
    );
    assert_eq!(app.balance_of(NOURA).await, "0");
    assert_eq!(app.balance_of(OMAR).await, "700");
    // The cached balance is the sum of the entries, and every entry has its order.
    let unbalanced = "SELECT count(*) AS n FROM point_accounts a WHERE balance <> \
         (SELECT coalesce(sum(points), 0) FROM point_entries e WHERE e.client_id = a.client_id)";
    assert_eq!(app.count(unbalanced).await, 0);
    let orphans = "SELECT count(*) AS n FROM point_entries e \
         WHERE kind IN ('gift_sent', 'gift_received') AND NOT EXISTS \
         (SELECT 1 FROM point_orders o WHERE o.correlation_id = e.order_correlation_id)";
    assert_eq!(app.count(orphans).await, 0);
    assert_eq!(
        app.count("SELECT count(*) AS n FROM point_orders WHERE payer_id = 1003")
            .await,
        7
    );
}
