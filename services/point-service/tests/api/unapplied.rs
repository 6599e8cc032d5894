//! Money taken without points is never silent: each capture that is not applied is
//! recorded with its event, counted in `payment_captures_unapplied_total{reason}`, listed
//! by `point-service unapplied-captures` and counted by the audit.

use point_service::reports::audit;
use serde_json::{Value, json};

use crate::helpers::*;

pub(crate) fn now() -> i64 {
    chrono::Utc::now().timestamp()
}

fn capture(id: &str, reference: &str, payment_id: &str, amount: i64, currency: &str) -> Value {
    json!({"id": id, "type": "payment_captured", "data": {"reference": reference, "payment_id": payment_id,
        "provider": "sandbox", "amount_minor": amount, "currency": currency}})
}

pub(crate) async fn outcome(app: &TestApp, event: &Value) -> Value {
    let (status, body) = app.webhook(event, WEBHOOK_SECRET, now()).await;
    assert_eq!(status, 200, "{body}");
    body["outcome"].clone()
}

pub(crate) async fn checkout_for_omar(app: &TestApp) -> String {
    let (_, order) = app.order(SARA, &order_body(OMAR, "checkout")).await;
    order["correlation_id"].as_str().unwrap().to_owned()
}

/// The counter's value for `reason` on the app's own `/metrics` (0 before its first use).
pub(crate) async fn unapplied_metric(app: &TestApp, reason: &str) -> u64 {
    let text = app
        .client
        .get(app.url("/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let series = format!("payment_captures_unapplied_total{{reason=\"{reason}\"}} ");
    text.lines()
        .find_map(|line| line.strip_prefix(series.as_str()))
        .map_or(0, |value| value.trim().parse().unwrap())
}

fn run_binary(app: &TestApp, args: &[&str]) -> (bool, String, String) {
    let output = point_service_command(app.database.url(), args)
        .output()
        .unwrap();
    (
        output.status.success(),
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
    )
}

/// Every reason, each recorded, counted and listed; the same payment again is listed once.
#[tokio::test]
async fn captures_that_are_not_applied_are_recorded_counted_listed_and_audited() {
    let app = spawn_app().await;
    let paid = checkout_for_omar(&app).await;
    let open = checkout_for_omar(&app).await;
    let reasons = [
        "already_successful",
        "unknown_order",
        "amount_mismatch",
        "currency_mismatch",
    ];
    let mut before = Vec::new();
    for reason in reasons {
        before.push(unapplied_metric(&app, reason).await);
    }
    assert_eq!(
        outcome(&app, &capture("evt_ok", &paid, "pay_ok", 1500, "SAR")).await,
        "captured"
    );
    let unknown = "00000000-0000-4000-8000-000000000000";
    let cases = [
        (
            capture("evt_again", &paid, "pay_again", 1500, "SAR"),
            "already_successful",
        ),
        (
            capture("evt_unknown", unknown, "pay_unknown", 1500, "SAR"),
            "unknown_order",
        ),
        (
            capture("evt_garbage", "not-an-order", "pay_garbage", 1500, "SAR"),
            "unknown_order",
        ),
        (
            capture("evt_less", &open, "pay_less", 1499, "SAR"),
            "amount_mismatch",
        ),
        (
            capture("evt_usd", &open, "pay_usd", 1500, "USD"),
            "currency_mismatch",
        ),
    ];
    for (event, reason) in &cases {
        assert_eq!(outcome(&app, event).await, *reason, "{event}");
    }
    // The same payment under another event id: no second charge, no second listing.
    assert_eq!(
        outcome(&app, &capture("evt_less_2", &open, "pay_less", 1499, "SAR")).await,
        "duplicate_capture"
    );
    assert_eq!(
        app.balance_of(OMAR).await,
        "100",
        "only the good capture credited"
    );
    assert_eq!(
        app.get_order(&open, SARA).await.1["status"],
        "initial_order",
        "a wrong amount leaves the order payable"
    );

    // Recorded with the event.
    assert_eq!(
        app.count(
            "SELECT count(*) AS n FROM unapplied_captures u JOIN payment_events e ON e.id = u.event_id
             WHERE e.outcome = u.reason AND u.resolved_at IS NULL"
        )
        .await,
        5
    );
    // Counted.
    let expected = [1, 2, 1, 1];
    for (n, reason) in reasons.iter().enumerate() {
        assert_eq!(
            unapplied_metric(&app, reason).await - before[n],
            expected[n],
            "{reason}"
        );
    }

    // The audit passes (they are listed) and counts them.
    let mut conn = app.database.connect().await;
    let report = audit::run(&mut conn).await.unwrap();
    assert_eq!(report.open_unapplied_captures, 5);

    // Listed by the binary, oldest first, for whoever refunds.
    let (ok, out, err) = run_binary(&app, &["unapplied-captures"]);
    assert!(ok, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0],
        "event_id\torder\tpayment_id\tamount\treason\trecorded_at"
    );
    assert_eq!(lines.len(), 7, "{out}");
    assert_eq!(lines[6], "5 open");
    let again: Vec<&str> = lines[1].split('\t').collect();
    assert_eq!(
        again[..5],
        [
            "evt_again",
            paid.as_str(),
            "pay_again",
            "15.00 SAR",
            "already_successful"
        ]
    );
    assert!(
        again[5].ends_with('Z') && again[5].len() == 20,
        "{}",
        again[5]
    );
    assert!(lines[5].starts_with(&format!(
        "evt_usd\t{open}\tpay_usd\t15.00 USD\tcurrency_mismatch\t"
    )));

    // Resolved: gone from the list and the count.
    let (ok, out, err) = run_binary(
        &app,
        &[
            "unapplied-captures",
            "--resolve",
            "evt_again",
            "--note",
            "refund rf_1 by ops",
        ],
    );
    assert!(ok, "{err}");
    assert_eq!(out, "resolved evt_again: refund rf_1 by ops\n");
    let (ok, _, err) = run_binary(
        &app,
        &[
            "unapplied-captures",
            "--resolve",
            "evt_again",
            "--note",
            "twice",
        ],
    );
    assert!(!ok, "a resolved one cannot be resolved again");
    assert!(
        err.contains("no open unapplied capture has event id evt_again"),
        "{err}"
    );
    let (_, out, _) = run_binary(&app, &["unapplied-captures"]);
    assert!(
        !out.contains("evt_again") && out.ends_with("4 open\n"),
        "{out}"
    );
    let (ok, out, err) = run_binary(&app, &["audit"]);
    assert!(ok, "{err}");
    assert!(
        out.contains("open unapplied captures: 4 (point-service unapplied-captures lists them)"),
        "{out}"
    );
}

#[tokio::test]
async fn the_audit_catches_a_capture_that_was_neither_applied_nor_listed() {
    let app = spawn_app().await;
    let paid = checkout_for_omar(&app).await;
    outcome(&app, &capture("evt_ok", &paid, "pay_ok", 1500, "SAR")).await;
    outcome(&app, &capture("evt_again", &paid, "pay_again", 1500, "SAR")).await;
    let mut conn = app.database.connect().await;
    assert!(audit::run(&mut conn).await.is_ok());
    // What the earlier code left behind: recorded, alerted once, listed nowhere.
    app.sql("DELETE FROM unapplied_captures").await;
    match audit::run(&mut conn).await {
        Err(audit::AuditError::Violation { check, detail }) => {
            assert_eq!(
                check,
                "every capture that was not applied is listed for refund"
            );
            assert!(
                detail.contains("evt_again") && detail.contains("pay_again"),
                "{detail}"
            );
        }
        other => panic!("expected a violation, got {other:?}"),
    }
}
