//! The payment sandbox against the real point service under the payment-attempt rules: a
//! double tap (a repeated card pay is a new payment on the same reference) where the first
//! payment is declined on its 3-D Secure page and the second approved pays the order once;
//! and a `decline` card, whose webhook the sandbox sends while the pay call is still being
//! answered, fails the order (a webhook that overtakes the pay route's record is answered
//! 503 and the sandbox delivers it again).

use std::time::Duration;

use e2e::DemoDatabases;
use e2e::demo::{OFFER_100, OMAR, SARA};
use e2e::stack::Stack;
use serde_json::{Value, json};

async fn order_status(stack: &Stack, id: &str) -> String {
    let url = format!("{}/api/v2/client/point-orders/{id}", stack.order.base);
    let (_, order) = stack.call("GET", &url, Some(SARA), &[], None).await;
    order["status"].as_str().unwrap().to_owned()
}

async fn balance(stack: &Stack) -> Value {
    let url = format!("{}/api/v2/client/points", stack.order.base);
    stack.call("GET", &url, Some(OMAR), &[], None).await.1["points"].clone()
}

#[tokio::test]
async fn the_sandbox_double_tap_and_decline_card_follow_the_attempt_rules() {
    let databases = DemoDatabases::create("sandbox").await;
    let stack = Stack::start(&databases.urls()).await;
    let orders = format!("{}/api/v2/client/point-orders", stack.order.base);
    let create = async || {
        let body =
            json!({"point_offer_id": OFFER_100, "to_client_id": 1002, "payment_type": "checkout"});
        let (status, created) = stack
            .call("POST", &orders, Some(SARA), &[], Some(&body))
            .await;
        assert_eq!(status, 200, "{created}");
        created["correlation_id"].as_str().unwrap().to_owned()
    };
    let pay = async |id: &str, card: &str| {
        let (status, started) = stack
            .call(
                "POST",
                &format!("{orders}/{id}/pay/card"),
                Some(SARA),
                &[],
                Some(&json!({"id": card, "cvv": "123"})),
            )
            .await;
        assert_eq!(status, 200, "{started}");
        started
    };
    let omar_before = balance(&stack).await;

    // The double tap: two payments on one reference, each with its own page.
    let id = create().await;
    let first = pay(&id, "card_visa_4242").await;
    let second = pay(&id, "card_visa_4242").await;
    assert_ne!(
        first["id"], second["id"],
        "a repeated card pay is a new payment"
    );
    let page = |started: &Value| started["redirect_url"].as_str().unwrap().to_owned();
    let (status, html) = stack
        .call(
            "POST",
            &format!("{}/decline", page(&first)),
            None,
            &[],
            None,
        )
        .await;
    assert_eq!(status, 200, "{html}");
    assert_eq!(
        order_status(&stack, &id).await,
        "initial_order",
        "the older payment's decline leaves the order to the newer one"
    );
    let (status, html) = stack
        .call(
            "POST",
            &format!("{}/approve", page(&second)),
            None,
            &[],
            None,
        )
        .await;
    assert_eq!(status, 200, "{html}");
    assert_eq!(order_status(&stack, &id).await, "successful");
    let omar_after = balance(&stack).await;
    let points = |v: &Value| v.as_str().unwrap().parse::<f64>().unwrap();
    assert_eq!(
        points(&omar_after) - points(&omar_before),
        100.0,
        "credited once"
    );

    // The decline card: the sandbox answers `declined` and sends the webhook at once.
    let declined = create().await;
    assert_eq!(pay(&declined, "decline-card").await["status"], "declined");
    // The sandbox retries the event on its own schedule (0.5 s to 8 s, five tries); wait
    // for the order to move, not for a fixed time.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while order_status(&stack, &declined).await != "payment_failed" {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the decline card never failed the order"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (status, _) = stack
        .call(
            "POST",
            &format!("{orders}/{declined}/pay/card"),
            Some(SARA),
            &[],
            Some(&json!({"id": "card_visa_4242", "cvv": "123"})),
        )
        .await;
    assert_eq!(status, 409, "a failed order takes no new payment");
}
