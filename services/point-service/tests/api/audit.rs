//! `point-service audit`: passes on a ledger that every kind of order and credit went
//! through, and names the first violation when the ledger is corrupted behind its back.

use point_service::reports::audit::{self, AuditError};
use serde_json::{Value, json};

use crate::helpers::*;

fn now() -> i64 {
    chrono::Utc::now().timestamp()
}

fn event(id: &str, kind: &str, reference: &str) -> Value {
    json!({"id": id, "type": kind, "data": {"reference": reference, "payment_id": "pay_1",
                                             "provider": "sandbox", "amount_minor": 1500, "currency": "SAR"}})
}

/// A point order, a captured and a declined card order, an open card order and a credit.
async fn busy_ledger() -> (TestApp, String) {
    let app = spawn_app().await;
    let (status, gift) = app.order(SARA, &order_body(OMAR, "point")).await;
    assert_eq!(status, 200, "{gift}");
    for (n, outcome) in ["payment_captured", "payment_declined"].iter().enumerate() {
        let (_, order) = app.order(SARA, &order_body(NOURA, "checkout")).await;
        let id = order["correlation_id"].as_str().unwrap();
        let (status, _) = app
            .webhook(
                &event(&format!("evt_{n}"), outcome, id),
                WEBHOOK_SECRET,
                now(),
            )
            .await;
        assert_eq!(status, 200);
    }
    let (_, open) = app.order(SARA, &order_body(SARA, "checkout")).await;
    let (status, _) = app
        .credit(&json!({"client_id": OMAR, "points": "100", "reference": "gift-card:1", "reason": "gift_card"}))
        .await;
    assert_eq!(status, 200);
    let _ = gift;
    (app, open["correlation_id"].as_str().unwrap().to_owned())
}

async fn audit(app: &TestApp) -> Result<audit::Report, AuditError> {
    let mut conn = app.database.connect().await;
    audit::run(&mut conn).await
}

fn violated(result: Result<audit::Report, AuditError>) -> (&'static str, String) {
    match result {
        Err(AuditError::Violation { check, detail }) => (check, detail),
        other => panic!("expected a violation, got {other:?}"),
    }
}

#[tokio::test]
async fn a_ledger_written_only_by_the_service_passes_every_check() {
    let (app, _) = busy_ledger().await;
    let report = audit(&app).await.unwrap();
    assert_eq!(report.passed.len(), 11, "{report:?}");
    assert_eq!(report.open_unapplied_captures, 0);
}

#[tokio::test]
async fn a_cached_balance_that_drifted_from_its_entries_is_caught() {
    let (app, _) = busy_ledger().await;
    app.sql("UPDATE point_accounts SET balance = balance + 1 WHERE client_id = 1001")
        .await;
    let (check, detail) = violated(audit(&app).await);
    assert_eq!(
        check,
        "every account's balance equals the sum of its entries"
    );
    assert!(detail.starts_with("account 1001: balance"), "{detail}");
}

#[tokio::test]
async fn a_support_entry_without_its_adjustment_and_an_adjustment_without_its_entry_are_caught() {
    let check = "every support adjustment moved its client's balance exactly once, as recorded";
    let (app, _) = busy_ledger().await;
    app.sql(
        "INSERT INTO point_entries (client_id, kind, points, reference)
         VALUES (1001, 'support_adjustment', 25, 'support:by-hand');
         UPDATE point_accounts SET balance = balance + 25 WHERE client_id = 1001",
    )
    .await;
    let (violated_check, detail) = violated(audit(&app).await);
    assert_eq!(violated_check, check);
    assert!(detail.contains("has no adjustment recorded"), "{detail}");

    let (app, _) = busy_ledger().await;
    app.sql(
        "INSERT INTO support_adjustments
             (reference, client_id, points, reason, operator_id, operator_role, balance_after)
         VALUES ('never-applied', 1001, -5, 'x', 'op', 'super_admin', 0)",
    )
    .await;
    let (violated_check, detail) = violated(audit(&app).await);
    assert_eq!(violated_check, check);
    assert!(
        detail.starts_with("adjustment never-applied: expected one entry"),
        "{detail}"
    );
}

#[tokio::test]
async fn points_credited_for_an_unpaid_order_are_caught() {
    let (app, open) = busy_ledger().await;
    app.sql(&format!(
        "INSERT INTO point_entries (client_id, kind, points, order_correlation_id)
         VALUES (1001, 'purchase', 250, '{open}');
         UPDATE point_accounts SET balance = balance + 250 WHERE client_id = 1001"
    ))
    .await;
    let (check, detail) = violated(audit(&app).await);
    assert_eq!(
        check,
        "initial_order and payment_failed orders have no entries"
    );
    assert!(detail.contains(&open), "{detail}");
}

#[tokio::test]
async fn a_point_order_credited_twice_is_caught() {
    let (app, _) = busy_ledger().await;
    app.sql(
        "INSERT INTO point_entries (client_id, kind, points, order_correlation_id)
           SELECT recipient_id, 'gift_received', point_amount, correlation_id FROM point_orders
           WHERE payment_type = 'point' AND order_no IS NOT NULL;
         UPDATE point_accounts SET balance = balance + 100 WHERE client_id = 1002",
    )
    .await;
    let (check, detail) = violated(audit(&app).await);
    assert_eq!(
        check,
        "every successful point order has exactly its charge and its credit"
    );
    assert!(
        detail.contains("gift_received 100 to 1002, gift_received 100 to 1002"),
        "{detail}"
    );
}

#[tokio::test]
async fn a_captured_card_order_without_its_credit_is_caught() {
    let (app, open) = busy_ledger().await;
    // Marked paid without the webhook's credit: what a half-applied capture would leave.
    app.sql(&format!(
        "UPDATE point_orders SET status = 'successful' WHERE correlation_id = '{open}'"
    ))
    .await;
    let (check, detail) = violated(audit(&app).await);
    assert_eq!(check, "every successful card order has exactly its credit");
    assert!(detail.ends_with("found none"), "{detail}");
}

#[tokio::test]
async fn an_idempotency_key_bound_to_another_clients_order_is_caught() {
    let (app, open) = busy_ledger().await;
    app.sql(&format!(
        "INSERT INTO idempotency_keys (client_id, key, request_hash, correlation_id) VALUES \
         (1002, 'k', '\\x00', '{open}')"
    ))
    .await;
    let (check, _) = violated(audit(&app).await);
    assert!(check.starts_with("an idempotency key"), "{check}");
}

#[tokio::test]
async fn a_payment_both_credited_and_listed_for_refund_is_caught() {
    let (app, _) = busy_ledger().await;
    audit(&app).await.unwrap();
    // What the earlier code could do: the payment that credited `evt_0`'s order, captured
    // again under another spelling of its reference, listed for refund all the same.
    app.sql(
        "INSERT INTO payment_events (id, type, reference, payment_id, amount_minor, currency, outcome)
         SELECT 'evt_0_again', type, upper(reference), payment_id, amount_minor, currency, 'already_successful'
         FROM payment_events WHERE id = 'evt_0' AND outcome = 'captured';
         INSERT INTO unapplied_captures (event_id, reference, payment_id, amount_minor, currency, reason)
         SELECT id, reference, payment_id, amount_minor, currency, outcome
         FROM payment_events WHERE id = 'evt_0_again';",
    )
    .await;
    let (check, detail) = violated(audit(&app).await);
    assert_eq!(check, "no payment is both credited and listed as unapplied");
    assert!(
        detail.contains("pay_1") && detail.contains("evt_0_again"),
        "{detail}"
    );
}

/// The busy ledger a year older, after Sara's points expired (her date, 2026-04-01, has
/// passed by the database's clock).
async fn expired_ledger() -> TestApp {
    let (app, _) = busy_ledger().await;
    let summary = app.expire_a_year_later().await;
    assert_eq!(summary.clients_expired, 1);
    app
}

const EXPIRY_CHECK: &str =
    "every expiry entry takes a whole positive balance, once its client's expiry date had passed";

#[tokio::test]
async fn a_ledger_with_an_expiry_passes_every_check() {
    let app = expired_ledger().await;
    let report = audit(&app).await.unwrap();
    assert!(report.passed.contains(&EXPIRY_CHECK), "{report:?}");
}

#[tokio::test]
async fn an_expiry_that_takes_more_than_the_balance_is_caught() {
    let app = expired_ledger().await;
    // Sara's points expired; a forged second expiry of a passed date (written on the day
    // it names, after her earns) passes the database's checks and leaves her at -250.
    app.sql(
        "INSERT INTO point_entries (client_id, kind, points, reference, created_at)
           VALUES (1001, 'expiry', -250, 'expiry:1001:2026-04-01:2026-11-02', '2026-11-02T10:00:00Z');
         UPDATE point_accounts SET balance = balance - 250 WHERE client_id = 1001",
    )
    .await;
    let (check, detail) = violated(audit(&app).await);
    assert_eq!(check, EXPIRY_CHECK);
    assert!(
        detail.contains(
            "of client 1001 (-250 points, reference \
                         expiry:1001:2026-04-01:2026-11-02): it leaves the balance at -250, not 0"
        ),
        "{detail}"
    );
}

#[tokio::test]
async fn an_expiry_named_for_another_client_is_caught() {
    let app = expired_ledger().await;
    // Only with the database's own check gone can Omar's expiry carry Sara's name: the
    // audit still finds it.
    app.sql(
        "ALTER TABLE point_entries DROP CONSTRAINT point_entries_expiry_reference;
         INSERT INTO point_entries (client_id, kind, points, reference)
         VALUES (1002, 'expiry', -1, 'expiry:1001:2026-04-01:2026-04-02');
         UPDATE point_accounts SET balance = balance - 1 WHERE client_id = 1002",
    )
    .await;
    let (check, detail) = violated(audit(&app).await);
    assert_eq!(check, EXPIRY_CHECK);
    assert!(
        detail.contains(
            "of client 1002 (-1 points, reference expiry:1001:2026-04-01:2026-04-02): \
                         the reference is not expiry:1002:<expiry date>:<run date>"
        ),
        "{detail}"
    );
}
