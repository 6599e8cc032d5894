//! Every metric family each running process exports passes `promtool check metrics`: above
//! all, each has its HELP text, so that whoever reads a series in Prometheus or Grafana is told
//! what it counts without reading the code. The services run over the demo databases and get
//! real traffic first (a login, a relayed balance, a point order, a card payment through the
//! sandbox, a gift-code redemption, a refused token, an operator call, the probes), so that
//! the families which appear only once something happens are in the text too.

use std::process::Stdio;
use std::time::Duration;

use e2e::demo::{OMAR, SARA, SARA_PHONE};
use e2e::stack::Stack;
use e2e::{DemoDatabases, Service, money, operator_token};
use tokio::io::AsyncWriteExt;

/// promtool's lint of one `/metrics` text: what it prints (nothing when the text is clean).
async fn promtool_check(text: &str) -> String {
    let promtool = e2e::tools::debian_binary("promtool", "prometheus");
    let mut child = tokio::process::Command::new(promtool)
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(text.as_bytes()).await.unwrap();
    drop(stdin);
    let output = child.wait_with_output().await.unwrap();
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// The `/metrics` text of `service` once it holds every family of `families` (some are set
/// by a service's background task, on its own schedule).
async fn scrape_with(service: &Service, families: &[&str]) -> String {
    let started = std::time::Instant::now();
    loop {
        let text = testkit::metrics::scrape(service.client(), &service.base).await;
        let missing: Vec<_> = families
            .iter()
            .filter(|family| !text.contains(&format!("# TYPE {family} ")))
            .collect();
        if missing.is_empty() {
            return text;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "{}: no {missing:?} after 60 s:\n{text}",
            service.name
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test]
async fn every_metric_family_of_every_process_has_help_text() {
    let databases = DemoDatabases::create("metrics-help").await;
    let stack = Stack::start(&databases.urls()).await;
    let http = reqwest::Client::new();
    let (auth, order) = (stack.auth.base.as_str(), stack.order.base.as_str());

    // A login by the test code (Sara's account sends no SMS).
    let reset = format!("{auth}/api/v1/clients/reset-otp?contact_phone={SARA_PHONE}");
    assert_eq!(stack.call("GET", &reset, None, &[], None).await.0, 200);
    let verify = format!("{auth}/api/v1/clients/verify-otp?contact_phone={SARA_PHONE}&code=1234");
    let (status, login) = stack.call("GET", &verify, None, &[], None).await;
    assert_eq!(status, 200, "{login}");

    // Point routes through the relay: a balance read, a refused token, a point order, a card
    // payment waiting at the sandbox; and a gift-code redemption (a credit attempt).
    money::balance(&http, order, SARA).await;
    let balance = format!("{order}/api/v2/client/points");
    let (status, refused) = stack
        .call("GET", &balance, Some("unknown-token"), &[], None)
        .await;
    assert_eq!(status, 401, "{refused}");
    money::fund(databases.points.url(), 1000).await;
    let (status, body) = money::point_order(&http, order, SARA, 1002, "metrics-help-1").await;
    assert_eq!(status, 200, "{body}");
    money::card_order(&http, order, SARA).await;
    money::add_gift_codes(databases.catalog.url(), "HELP", 1, "10").await;
    let (status, body) = money::redeem(&http, order, OMAR, "HELP-0000").await;
    assert_eq!(status, 200, "{body}");

    // An operator call.
    let token = operator_token("admin", "e2e", 1);
    let detail = format!("{}/api/v1/operator/services/3", stack.operator.base);
    let (status, body) = stack.call("GET", &detail, Some(&token), &[], None).await;
    assert_eq!(status, 200, "{body}");

    // The probes, whose outcomes are counted too.
    for service in [&stack.auth, &stack.points, &stack.order, &stack.operator] {
        assert_eq!(service.get("/readyz").await.status(), 200);
    }

    let processes: [(&Service, &[&str]); 5] = [
        (&stack.auth, &["otp_sms_sends_total", "http_requests_total"]),
        (
            &stack.points,
            &[
                "caller_lookups_total",
                "point_ledger_entries_total",
                "payment_service_requests_total",
                "payment_sync_oldest_due_seconds",
                "readiness_checks_total",
            ],
        ),
        (
            &stack.order,
            &[
                "relay_upstream_total",
                "gift_card_credit_attempts_total",
                "gift_card_credit_oldest_pending_seconds",
            ],
        ),
        (
            &stack.operator,
            &["http_requests_total", "db_pool_connections"],
        ),
        (&stack.sandbox, &["http_requests_total"]),
    ];
    let mut failures = Vec::new();
    for (service, families) in processes {
        let text = scrape_with(service, families).await;
        let lint = promtool_check(&text).await;
        if !lint.is_empty() {
            failures.push(format!("{}:\n{lint}", service.name));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
