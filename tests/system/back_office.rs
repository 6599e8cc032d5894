//! The loyalty back office over the real services: an operator creates, reprices and
//! withdraws an offer through the operator API (relayed to the real point service), and the
//! app, through the order service's relay, lists, buys and loses it at each step; the audit
//! trail names the operator of each change.

use e2e::DemoDatabases;
use e2e::demo::{OMAR, SARA};
use e2e::operator_token;
use e2e::stack::Stack;
use serde_json::{Value, json};

#[tokio::test]
async fn an_offer_the_back_office_creates_is_sold_by_the_app_until_it_is_withdrawn() {
    let databases = DemoDatabases::create("back_office").await;
    let stack = Stack::start(&databases.urls()).await;
    let admin = operator_token("admin", "loyalty-7", 1);
    let reader = operator_token("data_entry", "reader-1", 1);
    let operator = |path: &str| format!("{}/api/v1/operator{path}", stack.operator.base);
    let app = |path: &str| format!("{}/api/v2/client{path}", stack.order.base);

    // A lower role reads but cannot create.
    let body = json!({"pointAmount": "40.5", "purchasedPointAmount": "45", "amount": "6.25",
                      "sequence": 0});
    let (status, _) = stack
        .call(
            "POST",
            &operator("/offers"),
            Some(&reader),
            &[],
            Some(&body),
        )
        .await;
    assert_eq!(status, 403);
    let (status, created) = stack
        .call("POST", &operator("/offers"), Some(&admin), &[], Some(&body))
        .await;
    assert_eq!(status, 201, "{created}");
    let id = created["id"].as_str().unwrap().to_owned();

    // The app lists it first (sequence 0) and sells it.
    let (status, listed) = stack
        .call("GET", &app("/point-offers"), Some(SARA), &[], None)
        .await;
    assert_eq!(status, 200);
    assert_eq!(
        listed[0],
        json!({"id": id, "point_amount": 40.5, "purchased_point_amount": 45, "amount": "6.25"})
    );
    let gift = json!({"point_offer_id": id, "to_client_id": 1002, "payment_type": "point"});
    let (status, order) = stack
        .call("POST", &app("/point-orders"), Some(SARA), &[], Some(&gift))
        .await;
    assert_eq!(status, 200, "{order}");
    assert_eq!(
        (
            &order["status"],
            &order["point_amount"],
            &order["purchased_point_amount"]
        ),
        (&json!("successful"), &json!(40.5), &json!(45))
    );

    // Repriced: the app sees the new price on its next request.
    let (status, changed) = stack
        .call(
            "PATCH",
            &operator(&format!("/offers/{id}")),
            Some(&admin),
            &[],
            Some(&json!({"amount": 7})),
        )
        .await;
    assert_eq!(
        (status, &changed["amount"]),
        (200, &json!("7.00")),
        "{changed}"
    );
    let (_, one) = stack
        .call(
            "GET",
            &app(&format!("/point-offers/{id}")),
            Some(OMAR),
            &[],
            None,
        )
        .await;
    assert_eq!(one["amount"], json!("7.00"));

    // Withdrawn: gone from the app, an order naming it refused.
    let (status, _) = stack
        .call(
            "DELETE",
            &operator(&format!("/offers/{id}")),
            Some(&admin),
            &[],
            None,
        )
        .await;
    assert_eq!(status, 200);
    let (status, _) = stack
        .call(
            "GET",
            &app(&format!("/point-offers/{id}")),
            Some(OMAR),
            &[],
            None,
        )
        .await;
    assert_eq!(status, 404);
    let (status, _) = stack
        .call("POST", &app("/point-orders"), Some(SARA), &[], Some(&gift))
        .await;
    assert_eq!(status, 404);

    // The trail: three changes by loyalty-7, newest first, each with both sides.
    let (status, audit) = stack
        .call("GET", &operator("/loyalty/audit"), Some(&admin), &[], None)
        .await;
    assert_eq!(status, 200, "{audit}");
    let actions: Vec<(&str, &str, &str)> = audit["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["action"].as_str().unwrap(),
                e["operatorId"].as_str().unwrap(),
                e["role"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        actions,
        [
            ("offer.withdraw", "loyalty-7", "admin"),
            ("offer.update", "loyalty-7", "admin"),
            ("offer.create", "loyalty-7", "admin"),
        ]
    );
    assert_eq!(audit["data"][1]["before"]["amount"], json!("6.25"));
    assert_eq!(audit["data"][2]["before"], Value::Null);
}
