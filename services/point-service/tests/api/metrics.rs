//! What the point service counts for the alerts and the dashboard (deploy/prometheus,
//! deploy/grafana): refused webhook signatures by reason, ledger entries by kind, and the
//! money counters exported at zero from the start, so that the first event after a start
//! shows as an increase.
//!
//! The metrics registry is the process's, moved by every app in it: these tests count only
//! their own events with the process to themselves, as nextest gives each test (and `make
//! test` requires nextest). `cargo test` runs a binary's tests as threads of one process,
//! where the counts would race the other tests, so each refuses at once there, with the
//! reason (`testkit::metrics::alone_in_the_process`).

use serde_json::json;

use crate::helpers::*;

fn now() -> i64 {
    chrono::Utc::now().timestamp()
}

async fn scrape(app: &TestApp) -> String {
    testkit::metrics::scrape(&app.client, &app.base).await
}

fn count(text: &str, series: &str) -> f64 {
    testkit::metrics::value(text, series)
        .unwrap_or_else(|| panic!("{series} is not exported:\n{text}"))
}

#[tokio::test]
async fn money_counters_are_exported_at_zero_before_their_first_event() {
    testkit::metrics::alone_in_the_process();
    let app = spawn_app().await;
    let text = scrape(&app).await;
    for reason in [
        "already_successful",
        "payment_failed",
        "not_payable",
        "unknown_order",
        "amount_mismatch",
        "currency_mismatch",
        "unreadable",
    ] {
        let series = format!("payment_captures_unapplied_total{{reason=\"{reason}\"}}");
        assert_eq!(count(&text, &series), 0.0, "{series}");
    }
    for reason in ["missing", "malformed", "stale", "mismatch"] {
        let series = format!("payment_webhook_signature_failures_total{{reason=\"{reason}\"}}");
        assert_eq!(count(&text, &series), 0.0, "{series}");
    }
}

#[tokio::test]
async fn each_refused_signature_is_counted_by_its_reason() {
    testkit::metrics::alone_in_the_process();
    let app = spawn_app().await;
    let event = json!({"id": "evt_sig", "type": "payment_captured", "data": {"reference": "x"}});
    let series =
        |reason: &str| format!("payment_webhook_signature_failures_total{{reason=\"{reason}\"}}");
    let before = scrape(&app).await;
    assert_eq!(app.webhook(&event, "not-the-secret", now()).await.0, 401);
    // An old timestamp under another secret: anyone's attempt, not a late delivery.
    assert_eq!(
        app.webhook(&event, "not-the-secret", now() - 301).await.0,
        401
    );
    assert_eq!(
        app.webhook(&event, WEBHOOK_SECRET, now() - 301).await.0,
        401
    );
    // Ahead by an hour, not 301 s, which the service's later clock could bring inside.
    assert_eq!(
        app.webhook(&event, WEBHOOK_SECRET, now() + 3_600).await.0,
        401
    );
    for header in [None, Some("t=1,v2=00")] {
        let mut request = app.client.post(app.url(paths::WEBHOOK)).json(&event);
        if let Some(header) = header {
            request = request.header("x-signature", header);
        }
        assert_eq!(request.send().await.unwrap().status(), 401);
    }
    let after = scrape(&app).await;
    for (reason, n) in [
        ("mismatch", 2.0),
        ("stale", 2.0),
        ("missing", 1.0),
        ("malformed", 1.0),
    ] {
        assert_eq!(
            count(&after, &series(reason)) - count(&before, &series(reason)),
            n,
            "{reason}"
        );
    }
}

#[tokio::test]
async fn ledger_entries_are_counted_by_kind() {
    testkit::metrics::alone_in_the_process();
    let app = spawn_app().await;
    let (_, order) = app.order(SARA, &order_body(OMAR, "checkout")).await;
    let id = order["correlation_id"].as_str().unwrap();
    let series = r#"point_ledger_entries_total{kind="gift_received"}"#;
    let before = testkit::metrics::value(&scrape(&app).await, series).unwrap_or(0.0);
    let capture = json!({"id": "evt_led", "type": "payment_captured", "data": {"reference": id,
        "payment_id": "pay_led", "provider": "sandbox", "amount_minor": 1500, "currency": "SAR"}});
    assert_eq!(
        app.webhook(&capture, WEBHOOK_SECRET, now()).await.1["outcome"],
        "captured"
    );
    let after = count(&scrape(&app).await, series);
    assert_eq!(after - before, 1.0);
    // A replay appends nothing, and counts nothing.
    assert_eq!(
        app.webhook(&capture, WEBHOOK_SECRET, now()).await.1["outcome"],
        "duplicate_event"
    );
    assert_eq!(count(&scrape(&app).await, series), after);
}
