//! The point service's events beside the ledger's: a point order's outcome and a capture
//! listed for refund, each for the order's payer, and a back-office change of what the app
//! sells; each written with its change and sent to a real NATS, none for a change refused.

use serde_json::{Value, json};
use testkit::nats::NatsServer;

use crate::back_office::call;
use crate::events::{drain, publisher, rows, unpublished};
use crate::helpers::*;
use crate::unapplied::{checkout_for_omar, now, outcome};

fn payment(id: &str, kind: &str, reference: &str, payment_id: &str) -> Value {
    json!({"id": id, "type": kind, "data": {"reference": reference, "payment_id": payment_id,
        "provider": "sandbox", "amount_minor": 1500, "currency": "SAR"}})
}

/// The outbox's rows after the seed's, as (type, client, data), in id order.
async fn new_events(app: &TestApp) -> Vec<(String, Value, Value)> {
    rows(
        app,
        "SELECT type, client_id, data FROM event_outbox \
         WHERE data->>'entryId' IS NULL OR (data->>'entryId')::bigint > 3 ORDER BY id",
    )
    .await
    .into_iter()
    .map(|row| {
        (
            row["type"].as_str().unwrap().to_owned(),
            row["client_id"].clone(),
            row["data"].clone(),
        )
    })
    .collect()
}

#[tokio::test]
async fn outcomes_captures_for_refund_and_catalogue_changes_are_events_and_refusals_none() {
    let app = spawn_app().await;
    let nats = NatsServer::start();
    // Refused, each: an order above Sara's points, a capture with a bad signature, an offer
    // the back office refuses. None writes an event.
    app.sql("UPDATE point_offers SET purchased_point_amount = 100000 WHERE id = '64b7f0c2a1b2c3d4e5f60719'")
        .await;
    let mut too_much = order_body(OMAR, "point");
    too_much["point_offer_id"] = json!("64b7f0c2a1b2c3d4e5f60719");
    assert_eq!(app.order(SARA, &too_much).await.0, 422);
    let paid = checkout_for_omar(&app).await;
    let capture = payment("evt_paid", "payment_captured", &paid, "pay_paid");
    assert_eq!(app.webhook(&capture, "not-the-secret", now()).await.0, 401);
    let (status, _) = call(reqwest::Method::POST, "/offers")
        .body(json!({"pointAmount": 0}))
        .send(&app)
        .await;
    assert_eq!(status, 400);
    assert_eq!(new_events(&app).await, []);

    // Made, each: a card order paid, another declined, the paid one captured again under
    // another payment (money without points), a capture of no order, an order paid with
    // points, an offer made in the back office.
    assert_eq!(outcome(&app, &capture).await, "captured");
    let declined = checkout_for_omar(&app).await;
    let decline = payment(
        "evt_declined",
        "payment_declined",
        &declined,
        "pay_declined",
    );
    assert_eq!(outcome(&app, &decline).await, "declined");
    let again = payment("evt_again", "payment_captured", &paid, "pay_again");
    assert_eq!(outcome(&app, &again).await, "already_successful");
    let nowhere = "00000000-0000-4000-8000-000000000000";
    let stray = payment("evt_stray", "payment_captured", nowhere, "pay_stray");
    assert_eq!(outcome(&app, &stray).await, "unknown_order");
    let (status, by_points) = app.order(SARA, &order_body(OMAR, "point")).await;
    assert_eq!(status, 200);
    let by_points = by_points["correlation_id"].as_str().unwrap().to_owned();
    let (status, offer) = call(reqwest::Method::POST, "/offers")
        .body(json!({"pointAmount": "250", "amount": "30"}))
        .send(&app)
        .await;
    assert_eq!(status, 201, "{offer}");

    let events = new_events(&app).await;
    let kinds: Vec<(&str, &Value)> = events.iter().map(|(t, c, _)| (t.as_str(), c)).collect();
    let (sara, omar, none) = (json!(SARA), json!(OMAR), Value::Null);
    assert_eq!(
        kinds,
        [
            ("order.successful", &sara),
            ("points.credited", &omar),
            ("order.payment_failed", &sara),
            ("capture.unapplied", &sara),
            ("capture.unapplied", &none),
            ("order.successful", &sara),
            ("points.spent", &sara),
            ("points.credited", &omar),
            ("catalog.changed", &none),
        ]
    );
    let paid_order = app.get_order(&paid, SARA).await.1;
    assert_eq!(
        events[0].2,
        json!({"orderId": paid, "orderNo": paid_order["order_no"], "recipientId": OMAR,
               "orderType": paid_order["order_type"], "paymentType": "checkout", "points": "100",
               "pointsPrice": "120", "moneyAmount": "15", "occasionId": paid_order["point_occasion_id"]})
    );
    assert_eq!(events[2].2["orderId"], json!(declined));
    assert_eq!(events[5].2["orderId"], json!(by_points));
    assert_eq!(events[5].2["paymentType"], json!("point"));
    assert_eq!(
        events[3].2,
        json!({"paymentEventId": "evt_again", "paymentId": "pay_again", "orderId": paid,
               "amountMinor": "1500", "currency": "SAR", "reason": "already_successful"})
    );
    assert_eq!(events[4].2["orderId"], Value::Null);
    assert_eq!(events[4].2["reason"], json!("unknown_order"));
    assert_eq!(events[8].2["action"], json!("offer.create"));
    assert_eq!(
        events[8].2["record"],
        json!(format!("offer:{}", offer["id"].as_str().unwrap()))
    );
    assert_eq!(events[8].2["after"], offer);

    // All of them reach the stream; those about no client carry no subject.
    let publisher = publisher(&app, "replica-a");
    let context = outbox::publisher::connect(&nats.url(), 1).await.unwrap();
    assert_eq!(drain(&publisher, &context).await.unwrap(), 3 + events.len());
    assert_eq!(unpublished(&app).await, 0);
    let received = nats.events().await;
    let sent: Vec<&Value> = received.iter().skip(3).map(|m| &m.event["data"]).collect();
    let written: Vec<&Value> = events.iter().map(|(_, _, data)| data).collect();
    assert_eq!(sent, written);
    for (message, (_, client, _)) in received.iter().skip(3).zip(&events) {
        let subject = client.as_i64().map(|id| json!(id.to_string()));
        assert_eq!(
            message.event.get("subject"),
            subject.as_ref(),
            "{}",
            message.event
        );
    }
    testkit::nats::record_samples(
        env!("CARGO_TARGET_TMPDIR"),
        "point-service-orders",
        &received,
    );
}

/// Each kind's change, rolled back, leaves no event; the same change committed leaves exactly
/// one (so the first half can fail).
#[tokio::test]
async fn each_kind_rolled_back_leaves_no_event_and_committed_leaves_one() {
    let app = spawn_app().await;
    let order = checkout_for_omar(&app).await;
    let changes = [
        (
            "points.credited",
            "INSERT INTO point_entries (client_id, kind, points) VALUES (1001, 'earn', 5)".to_owned(),
        ),
        (
            "points.expiring",
            "INSERT INTO expiry_notices (client_id, expiry_date, days_before, points, as_of_entry_id) \
             VALUES (1001, '2030-01-01', 7, 5, 0)"
                .to_owned(),
        ),
        (
            "order.successful",
            format!("UPDATE point_orders SET status = 'successful' WHERE correlation_id = '{order}'"),
        ),
        (
            "capture.unapplied",
            format!(
                "INSERT INTO payment_events (id, type, reference, outcome) \
                 VALUES ('evt_rb', 'payment_captured', '{order}', 'unapplied'); \
                 INSERT INTO unapplied_captures (event_id, reference, correlation_id, reason) \
                 VALUES ('evt_rb', '{order}', '{order}', 'unreadable')"
            ),
        ),
        (
            "catalog.changed",
            "INSERT INTO back_office_audit (operator_id, role, action, subject, before, after) \
             VALUES ('7', 'admin', 'occasion.create', 'occasion:x', 'null', '{}')"
                .to_owned(),
        ),
    ];
    let of_kind =
        |kind: &str| format!("SELECT count(*) AS n FROM event_outbox WHERE type = '{kind}'");
    for (kind, change) in &changes {
        let before = app.count(&of_kind(kind)).await;
        app.sql(&format!("BEGIN; {change}; ROLLBACK;")).await;
        assert_eq!(
            app.count(&of_kind(kind)).await,
            before,
            "{kind} rolled back"
        );
        app.sql(&format!("BEGIN; {change}; COMMIT;")).await;
        assert_eq!(
            app.count(&of_kind(kind)).await,
            before + 1,
            "{kind} committed"
        );
    }
}
