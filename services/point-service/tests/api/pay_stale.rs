//! A checkout order is paid at its offer's price of now or not at all: one made before its
//! offer was withdrawn, taken off sale or repriced, or longer ago than
//! UNPAID_ORDER_LAPSE_HOURS, is refused at pay with 409 (the app makes a new order, as after
//! a failed payment), and nothing is asked of the payment service.

use serde_json::{Value, json};

use crate::back_office::call;
use crate::helpers::*;

async fn checkout(app: &TestApp) -> String {
    let (status, order) = app.order(SARA, &order_body(OMAR, "checkout")).await;
    assert_eq!(status, 200, "{order}");
    order["correlation_id"].as_str().unwrap().to_owned()
}

fn refused(message: String) -> (u16, Value) {
    (409, testkit::error_b("CONFLICT", &message))
}

async fn pay_both_ways(app: &TestApp, id: &str) -> [(u16, Value); 2] {
    [
        app.pay_card(id, SARA, &json!({"id": "card_1", "cvv": "123"}))
            .await,
        app.pay_session(id, SARA, &json!({})).await,
    ]
}

fn changed(id: &str) -> (u16, Value) {
    refused(format!(
        "point order {id} was made at a price its offer no longer has; create a new order"
    ))
}

#[tokio::test]
async fn an_order_whose_offer_was_repriced_or_withdrawn_is_not_paid_at_the_old_price() {
    let app = spawn_app().await;
    let offer = format!("/offers/{OFFER}");
    let repriced = checkout(&app).await;
    let (status, _) = call(reqwest::Method::PATCH, &offer)
        .body(json!({"amount": "14.00"}))
        .send(&app)
        .await;
    assert_eq!(status, 200);
    assert_eq!(
        pay_both_ways(&app, &repriced).await,
        [changed(&repriced), changed(&repriced)]
    );
    // An order made at the new price pays.
    let fresh = checkout(&app).await;
    assert_eq!(pay_both_ways(&app, &fresh).await[0].0, 200);
    // Off sale, then withdrawn: neither order pays any more.
    call(reqwest::Method::PATCH, &offer)
        .body(json!({"active": false}))
        .send(&app)
        .await;
    assert_eq!(pay_both_ways(&app, &fresh).await[1], changed(&fresh));
    call(reqwest::Method::DELETE, &offer).send(&app).await;
    assert_eq!(pay_both_ways(&app, &fresh).await[0], changed(&fresh));
    assert_eq!(
        app.payments.lock().unwrap().len(),
        2,
        "only the card and the session of the order still sold asked"
    );
    let (_, order) = app.get_order(&repriced, SARA).await;
    assert_eq!(
        order["status"], "initial_order",
        "the spec's states: left alone"
    );
}

#[tokio::test]
async fn an_order_not_paid_within_the_lapse_is_not_paid_later() {
    let app = spawn_app().await;
    let id = checkout(&app).await;
    app.sql(&format!(
        "UPDATE point_orders SET created_at = now() - interval '23 hours 59 minutes' \
         WHERE correlation_id = '{id}'"
    ))
    .await;
    assert_eq!(pay_both_ways(&app, &id).await[1].0, 200);
    app.sql(&format!(
        "UPDATE point_orders SET created_at = now() - interval '24 hours' \
         WHERE correlation_id = '{id}'"
    ))
    .await;
    let lapsed = refused(format!(
        "point order {id} was not paid within 24 hours; create a new order"
    ));
    assert_eq!(pay_both_ways(&app, &id).await, [lapsed.clone(), lapsed]);
}

#[tokio::test]
async fn an_offer_changed_after_the_first_checks_stops_the_attempt_under_the_orders_lock() {
    use diesel_async::AsyncConnection;
    use point_service::payments::attempts;
    let app = spawn_app().await;
    let id = checkout(&app).await;
    let mut conn = diesel_async::AsyncPgConnection::establish(app.database.url())
        .await
        .unwrap();
    // The pay route's first checks passed (the order as it read it) ...
    let order = point_service::orders::payers_order(&mut conn, id.parse().unwrap(), SARA)
        .await
        .unwrap();
    // ... then, while it asked the auth service for the payer's profile, the offer was
    // repriced: the attempt, recorded under the order's lock, is refused and nothing is kept.
    call(reqwest::Method::PATCH, &format!("/offers/{OFFER}"))
        .body(json!({"amount": "14.50"}))
        .send(&app)
        .await;
    let started = attempts::start(
        &mut conn,
        &order,
        attempts::Kind::Card,
        std::time::Duration::from_secs(30),
        20,
        std::time::Duration::from_secs(120),
        24,
    )
    .await;
    assert!(
        matches!(&started, Err(refused) if refused.to_string().contains("was made at a price its offer no longer has")),
        "{started:?}"
    );
    let kept = format!("SELECT count(*) AS n FROM payment_attempts WHERE correlation_id = '{id}'");
    assert_eq!(app.count(&kept).await, 0);
    assert!(app.payments.lock().unwrap().is_empty());
}
