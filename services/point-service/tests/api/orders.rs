//! Creating, reading and describing point orders: the Errors rows and both check orders.

use serde_json::{Value, json};

use crate::helpers::*;

#[tokio::test]
async fn a_point_order_settles_at_once() {
    let app = spawn_app().await;
    let (status, order) = app.order(SARA, &order_body(OMAR, "point")).await;
    assert_eq!(status, 200, "{order}");
    assert_eq!(keys(&order), ORDER_KEYS);
    assert_eq!(order["correlation_id"].as_str().unwrap().len(), 36);
    assert_eq!(
        order["correlation_id"].as_str().unwrap().chars().nth(14),
        Some('4'),
        "UUID v4"
    );
    assert!(order["order_no"].as_i64().unwrap() >= 100_000);
    let mut rest = order.clone();
    rest.as_object_mut()
        .unwrap()
        .retain(|k, _| k != "correlation_id" && k != "order_no");
    assert_eq!(
        rest,
        json!({"status": "successful", "payment_status": null, "point_amount": 100, "purchased_point_amount": 120,
               "money_amount": "15.00", "payment_type": "point", "order_type": "transfer"})
    );
    assert_eq!(app.balance_of(SARA).await, "580.25");
    assert_eq!(app.balance_of(OMAR).await, "100");
}

#[tokio::test]
async fn a_checkout_order_waits_unpaid_and_may_be_for_oneself() {
    let app = spawn_app().await;
    let mut body = order_body(SARA, "checkout");
    body["point_occasion_id"] = json!(OCCASION);
    let (status, order) = app.order(SARA, &body).await;
    assert_eq!(status, 200);
    assert_eq!(
        (
            order["status"].clone(),
            order["payment_status"].clone(),
            order["order_type"].clone()
        ),
        (json!("initial_order"), json!(null), json!("gift"))
    );
    assert_eq!(
        app.balance_of(SARA).await,
        "700.25",
        "no points move on checkout"
    );
}

#[tokio::test]
async fn order_numbers_start_at_100000_and_ids_are_new_each_time() {
    let app = spawn_app().await;
    let (_, first) = app.order(SARA, &order_body(OMAR, "checkout")).await;
    let (_, second) = app.order(SARA, &order_body(OMAR, "checkout")).await;
    assert_eq!(first["order_no"], 100_000);
    assert_eq!(second["order_no"], 100_001);
    assert_ne!(first["correlation_id"], second["correlation_id"]);
}

#[tokio::test]
async fn free_text_never_makes_a_gift() {
    let app = spawn_app().await;
    let mut body = order_body(OMAR, "checkout");
    body["occasion"] = json!("  My own reason  ");
    assert_eq!(app.order(SARA, &body).await.1["order_type"], "transfer");
}

#[tokio::test]
async fn a_bad_body_gets_the_details_and_a_non_object_the_form_error() {
    let app = spawn_app().await;
    let (status, body) = app
        .order(
            SARA,
            &json!({"point_offer_id": 3, "to_client_id": "abc", "payment_type": "card"}),
        )
        .await;
    assert_eq!(status, 400);
    assert_eq!(keys(&body["error"]), ["code", "message", "details"]);
    assert_eq!(
        (
            body["error"]["code"].clone(),
            body["error"]["message"].clone()
        ),
        (json!("VALIDATION_ERROR"), json!("Invalid point-order body"))
    );
    let fields: Vec<String> = keys(&body["error"]["details"]["fieldErrors"]);
    assert_eq!(fields, ["point_offer_id", "to_client_id", "payment_type"]);
    assert_eq!(body["error"]["details"]["formErrors"], json!([]));

    let response = app
        .client
        .post(app.url(&paths::orders()))
        .bearer_auth(token(SARA))
        .send()
        .await
        .unwrap();
    assert_eq!(
        answer(response).await,
        (
            400,
            json!({"success": false, "error": {"code": "VALIDATION_ERROR", "message": "Invalid point-order body",
                     "details": {"formErrors": ["Expected object, received null"], "fieldErrors": {}}}})
        )
    );
}

#[tokio::test]
async fn the_point_check_order_flag_self_offer_recipient_occasion_price_payer() {
    // Each step breaks that check and every later one: the earliest must answer.
    let disabled = spawn_app_with(Options {
        flags: point_service::config::Flags {
            point_orders: false,
            card_payments: true,
        },
        ..Options::default()
    })
    .await;
    let everything_wrong = json!({"point_offer_id": OFFER_INACTIVE, "to_client_id": GHOST,
        "payment_type": "point", "point_occasion_id": OCCASION_INACTIVE});
    assert_eq!(
        disabled.order(GHOST, &everything_wrong).await,
        (
            403,
            error_b("FORBIDDEN", "paying a point order with points is disabled")
        )
    );

    let app = spawn_app().await;
    assert_eq!(
        app.order(GHOST, &everything_wrong).await,
        (
            400,
            error_b(
                "VALIDATION_ERROR",
                "a point order cannot be paid with points to yourself"
            )
        )
    );
    let mut body = everything_wrong.clone();
    body["to_client_id"] = json!(4242);
    assert_eq!(
        app.order(GHOST, &body).await,
        (
            404,
            error_b(
                "NOT_FOUND",
                &format!("point offer {OFFER_INACTIVE} not found or inactive")
            )
        )
    );
    body["point_offer_id"] = json!(OFFER_NO_POINTS_PRICE);
    assert_eq!(
        app.order(GHOST, &body).await,
        (
            400,
            error_b("VALIDATION_ERROR", "to_client_id 4242 does not exist")
        )
    );
    body["to_client_id"] = json!(OMAR);
    assert_eq!(
        app.order(GHOST, &body).await,
        (
            400,
            error_b(
                "VALIDATION_ERROR",
                &format!("point occasion {OCCASION_INACTIVE} not found or inactive")
            )
        )
    );
    body["point_occasion_id"] = json!(OCCASION);
    assert_eq!(
        app.order(GHOST, &body).await,
        (
            400,
            error_b(
                "VALIDATION_ERROR",
                &format!(
                    "point offer {OFFER_NO_POINTS_PRICE} cannot be paid with points: it has no purchased_point_amount"
                )
            )
        )
    );
    body["point_offer_id"] = json!(OFFER);
    assert_eq!(
        app.order(GHOST, &body).await,
        (
            400,
            error_b(
                "VALIDATION_ERROR",
                &format!("client {GHOST} does not exist")
            )
        )
    );
    assert_eq!(
        app.order(NOURA, &body).await,
        (
            422,
            error_b(
                "INSUFFICIENT_POINTS",
                &format!("insufficient points for client {NOURA}")
            )
        )
    );
    assert_eq!(
        app.count("SELECT count(*) AS n FROM point_orders WHERE order_no IS NOT NULL")
            .await,
        0,
        "no order made"
    );
}

#[tokio::test]
async fn the_checkout_check_order_offer_recipient_occasion() {
    let app = spawn_app().await;
    let mut body = json!({"point_offer_id": OFFER_INACTIVE, "to_client_id": 4242,
        "payment_type": "checkout", "point_occasion_id": OCCASION_INACTIVE});
    assert_eq!(app.order(GHOST, &body).await.0, 404);
    body["point_offer_id"] = json!(OFFER_NO_POINTS_PRICE);
    assert_eq!(
        app.order(GHOST, &body).await,
        (
            400,
            error_b("VALIDATION_ERROR", "to_client_id 4242 does not exist")
        )
    );
    body["to_client_id"] = json!(OMAR);
    assert_eq!(
        app.order(GHOST, &body).await.1["error"]["message"],
        format!("point occasion {OCCASION_INACTIVE} not found or inactive")
    );
    body["point_occasion_id"] = json!(null);
    // No points price and no payer profile are not checkout's business.
    assert_eq!(app.order(GHOST, &body).await.0, 200);
}

#[tokio::test]
async fn an_idempotency_key_replays_the_first_order_and_refuses_another_body() {
    let app = spawn_app().await;
    let send = |body: Value, key: &'static str| {
        app.client
            .post(app.url(&paths::orders()))
            .bearer_auth(token(SARA))
            .header("idempotency-key", key)
            .json(&body)
            .send()
    };
    let (status, first) = answer(send(order_body(OMAR, "point"), "k-1").await.unwrap()).await;
    assert_eq!(status, 200);
    let (status, again) = answer(send(order_body(OMAR, "point"), "k-1").await.unwrap()).await;
    assert_eq!((status, &again), (200, &first));
    assert_eq!(app.balance_of(SARA).await, "580.25", "charged once");
    let (status, body) = answer(send(order_body(NOURA, "point"), "k-1").await.unwrap()).await;
    assert_eq!(
        (status, body["error"]["code"].clone()),
        (409, json!("CONFLICT"))
    );
    // Another caller's key of the same name is another key.
    let other = app
        .client
        .post(app.url(&paths::orders()))
        .bearer_auth(token(OMAR))
        .header("idempotency-key", "k-1")
        .json(&order_body(SARA, "checkout"))
        .send()
        .await
        .unwrap();
    assert_eq!(answer(other).await.0, 200);
    // Without a key every call is a new order.
    app.order(SARA, &order_body(OMAR, "point")).await;
    assert_eq!(app.balance_of(SARA).await, "460.25");
}

#[tokio::test]
async fn an_order_is_visible_to_its_payer_and_recipient_only() {
    let app = spawn_app().await;
    let (_, order) = app.order(SARA, &order_body(OMAR, "checkout")).await;
    let id = order["correlation_id"].as_str().unwrap().to_owned();
    assert_eq!(app.get_order(&id, SARA).await, (200, order.clone()));
    assert_eq!(app.get_order(&id, OMAR).await, (200, order));
    let not_found = (404, error_b("NOT_FOUND", "point order not found"));
    assert_eq!(app.get_order(&id, NOURA).await, not_found);
    assert_eq!(
        app.get_order("0f1c1f9e-2d0b-4b43-9a52-5d2f0c7e8a11", SARA)
            .await,
        not_found
    );
    assert_eq!(
        app.get("/api/v2/client/point-orders/not-a-uuid", SARA)
            .await,
        not_found
    );
}

#[tokio::test]
async fn a_legacy_order_reads_back_like_any_other() {
    let app = spawn_app().await;
    let (status, order) = app.get_order(LEGACY_ORDER, OMAR).await;
    assert_eq!(status, 200);
    assert_eq!(
        order,
        json!({"correlation_id": LEGACY_ORDER, "order_no": null, "status": "paid", "payment_status": "AUTHORIZED",
               "point_amount": 100, "purchased_point_amount": 120, "money_amount": "15.00", "payment_type": "checkout",
               "order_type": "transfer"})
    );
}

#[tokio::test]
async fn the_description_names_the_caller_and_keeps_the_double_space() {
    let app = spawn_app().await;
    let (status, body) = app
        .description(
            SARA,
            &json!({"point_offer_id": OFFER, "point_occasion_id": OCCASION}),
        )
        .await;
    assert_eq!(
        (status, body),
        (
            200,
            json!({"description": "Sara Ali sent you 100 points  for Birthday"})
        )
    );
    let free_text = json!({"point_offer_id": OFFER, "point_occasion_id": OCCASION_INACTIVE, "occasion": " Eid "});
    let (_, body) = app.description(SARA, &free_text).await;
    assert_eq!(
        body["description"], "Sara Ali sent you 100 points  for Eid",
        "free text wins; the occasion is not looked up"
    );
    let (_, body) = app
        .description(SARA, &json!({"point_offer_id": OFFER}))
        .await;
    assert_eq!(body["description"], "Sara Ali sent you 100 points");
    assert_eq!(
        app.description(SARA, &json!({"point_offer_id": OFFER_INACTIVE}))
            .await
            .0,
        404
    );
    assert_eq!(
        app.description(
            SARA,
            &json!({"point_offer_id": OFFER, "point_occasion_id": OCCASION_INACTIVE})
        )
        .await
        .0,
        400
    );
    assert_eq!(
        app.description(GHOST, &json!({"point_offer_id": OFFER}))
            .await,
        (
            400,
            error_b(
                "VALIDATION_ERROR",
                &format!("client {GHOST} does not exist")
            )
        )
    );
    assert_eq!(
        app.count("SELECT count(*) AS n FROM point_orders WHERE order_no IS NOT NULL")
            .await,
        0,
        "writes nothing"
    );
}
