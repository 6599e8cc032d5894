//! What one client can make the service store is bounded: unpaid `checkout` orders per payer
//! (`UNPAID_ORDERS_PER_CLIENT_PER_DAY`) and pay calls per order (`PAYMENT_ATTEMPTS_PER_ORDER`),
//! each answered 429 in envelope B past its bound, and neither overshot by a parallel burst.

use futures_util::future::join_all;
use point_service::config::Limits;
use serde_json::json;

use crate::helpers::*;

fn limited(unpaid_orders_per_day: u64, attempts_per_order: u64) -> Options {
    Options {
        limits: Limits {
            unpaid_orders_per_day,
            attempts_per_order,
            ..Limits::default()
        },
        ..Options::default()
    }
}

#[tokio::test]
async fn unpaid_checkout_orders_are_bounded_per_payer_even_in_a_burst() {
    let app = spawn_app_with(limited(3, 20)).await;
    let body = order_body(OMAR, "checkout");
    let burst = (0..10).map(|_| app.order(SARA, &body));
    let statuses: Vec<u16> = join_all(burst).await.into_iter().map(|(s, _)| s).collect();
    assert_eq!(
        statuses.iter().filter(|s| **s == 200).count(),
        3,
        "{statuses:?}"
    );
    assert_eq!(
        statuses.iter().filter(|s| **s == 429).count(),
        7,
        "{statuses:?}"
    );

    let (status, body) = app.order(SARA, &order_body(OMAR, "checkout")).await;
    assert_eq!(
        (status, body),
        (
            429,
            error_b(
                "RATE_LIMITED",
                "too many unpaid point orders: 3 in 24 hours; pay or drop the older ones first"
            )
        )
    );
    // Another payer has a bound of its own, and a `point` order is paid at once.
    assert_eq!(app.order(OMAR, &order_body(SARA, "checkout")).await.0, 200);
    assert_eq!(app.order(SARA, &order_body(OMAR, "point")).await.0, 200);
    // An order that is paid no longer counts.
    app.sql(&format!(
        "UPDATE point_orders SET status = 'successful' WHERE correlation_id = \
         (SELECT correlation_id FROM point_orders WHERE payer_id = {SARA} AND status = 'initial_order' LIMIT 1)"
    ))
    .await;
    assert_eq!(app.order(SARA, &order_body(OMAR, "checkout")).await.0, 200);
    assert_eq!(
        app.count(&format!(
            "SELECT count(*) AS n FROM point_orders WHERE payer_id = {SARA} AND status = 'initial_order'"
        ))
        .await,
        3
    );
}

#[tokio::test]
async fn pay_calls_are_bounded_per_order() {
    let app = spawn_app_with(limited(1000, 2)).await;
    let (_, order) = app.order(SARA, &order_body(OMAR, "checkout")).await;
    let id = order["correlation_id"].as_str().unwrap().to_owned();
    let pay = async |card: &str| {
        app.pay_card(&id, SARA, &json!({"id": card, "cvv": "123"}))
            .await
    };
    assert_eq!(pay("tap-1").await.0, 200);
    assert_eq!(pay("tap-2").await.0, 200);
    let (status, body) = pay("tap-3").await;
    assert_eq!(
        (status, body),
        (
            429,
            error_b(
                "RATE_LIMITED",
                &format!("too many payment attempts for point order {id}: 2")
            )
        )
    );
    let (status, _) = app.pay_session(&id, SARA, &json!({})).await;
    assert_eq!(status, 429, "the session route counts too");
    assert_eq!(
        app.count(&format!(
            "SELECT count(*) AS n FROM payment_attempts WHERE correlation_id = '{id}'"
        ))
        .await,
        2
    );
}

/// A refused create says when the bound lets the next one through (`Retry-After`, whole
/// seconds rounded up): once the oldest of the unpaid orders that hold it at its bound is 24
/// hours old. The orders are aged to known ages; the only slack is the time the test took
/// between aging them and the answer, which it measures.
#[tokio::test]
async fn a_refused_checkout_order_says_when_the_oldest_unpaid_one_leaves_the_day() {
    let app = spawn_app_with(limited(2, 20)).await;
    for _ in 0..2 {
        assert_eq!(app.order(SARA, &order_body(OMAR, "checkout")).await.0, 200);
    }
    let aged = std::time::Instant::now();
    app.sql(&format!(
        "UPDATE point_orders SET created_at = now() - interval '23 hours' WHERE correlation_id = \
         (SELECT correlation_id FROM point_orders WHERE payer_id = {SARA} \
         AND status = 'initial_order' ORDER BY created_at LIMIT 1); \
         UPDATE point_orders SET created_at = now() - interval '2 hours' WHERE correlation_id = \
         (SELECT correlation_id FROM point_orders WHERE payer_id = {SARA} \
         AND status = 'initial_order' ORDER BY created_at DESC LIMIT 1)"
    ))
    .await;
    let response = app
        .client
        .post(app.url(&paths::orders()))
        .bearer_auth(token(SARA))
        .json(&order_body(OMAR, "checkout"))
        .send()
        .await
        .unwrap();
    testkit::assert_wait(testkit::retry_after(&response), 3600, aged);
    assert_eq!(
        response.json::<serde_json::Value>().await.unwrap(),
        error_b(
            "RATE_LIMITED",
            "too many unpaid point orders: 2 in 24 hours; pay or drop the older ones first"
        )
    );
}
