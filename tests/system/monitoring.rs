//! The alert rules and the dashboard against the running system: a real Prometheus scrapes
//! the services and fires an alert once its condition is caused, and every query of the
//! rules (deploy/prometheus/alerts.yml) and of the dashboard (deploy/grafana/loyalty.json)
//! parses in Prometheus and names only metrics and labels that the services export.

use std::path::PathBuf;
use std::time::Duration;

use e2e::demo::{OMAR, SARA};
use e2e::prometheus::{NAMESPACE, Prometheus};
use e2e::promql_names::{Exported, KUBE_STATE_METRICS, problems};
use e2e::stack::Stack;
use e2e::{DemoDatabases, money, repo_root};
use serde_json::{Value, json};

fn alert_rules() -> PathBuf {
    repo_root().join("deploy/prometheus/alerts.yml")
}

/// The four services as Prometheus's jobs, named as the PodMonitor names them in a cluster.
fn targets(stack: &Stack) -> [(&'static str, &str); 4] {
    [
        ("auth-service", stack.auth.base.as_str()),
        ("point-service", stack.points.base.as_str()),
        ("order-service", stack.order.base.as_str()),
        ("operator-service", stack.operator.base.as_str()),
    ]
}

#[tokio::test]
async fn an_unapplied_capture_fires_its_alert_in_a_real_prometheus() {
    let databases = DemoDatabases::create("alerting").await;
    let stack = Stack::start(&databases.urls()).await;
    let prometheus = Prometheus::start(&targets(&stack), &[&alert_rules()]).await;
    // The counter is scraped at zero before the capture: an increase needs the zero.
    let series = r#"payment_captures_unapplied_total{job="point-service",reason="unknown_order"}"#;
    prometheus
        .wait_for(
            "the counter's first scrape",
            Duration::from_secs(60),
            async || {
                let result = prometheus.api("query", &[("query", series)]).await;
                (result["result"].as_array()?.len() == 1).then_some(())
            },
        )
        .await;
    let named = |alerts: &[Value]| {
        alerts
            .iter()
            .filter(|a| a["labels"]["alertname"] == "PaymentCapturedWithoutPoints")
            .cloned()
            .collect::<Vec<_>>()
    };
    assert_eq!(named(&prometheus.alerts().await), Vec::<Value>::new());

    // A capture naming no order of ours: the client's money taken, no points given.
    let capture = json!({"id": "evt_alerting", "type": "payment_captured", "data": {
        "reference": uuid::Uuid::new_v4(), "payment_id": "pay_alerting", "provider": "e2e",
        "amount_minor": 1500, "currency": "SAR"}});
    let http = reqwest::Client::new();
    let (status, body) = money::send_event(&http, &stack.points.base, &capture).await;
    assert_eq!(
        (status, body.as_str()),
        (200, r#"{"received":true,"outcome":"unknown_order"}"#)
    );

    let firing = prometheus
        .wait_for("the alert to fire", Duration::from_secs(90), async || {
            let alerts = named(&prometheus.alerts().await);
            alerts.into_iter().find(|alert| alert["state"] == "firing")
        })
        .await;
    assert_eq!(
        firing["labels"],
        json!({"alertname": "PaymentCapturedWithoutPoints", "job": "point-service",
               "namespace": NAMESPACE, "reason": "unknown_order", "severity": "critical"})
    );
    // Absolute, so that Alertmanager can open it: alerts.yml's default base (an overlay
    // replaces it: k8s/components/monitoring).
    assert_eq!(
        firing["annotations"]["runbook_url"],
        "https://git.example.com/loyalty/backend/-/blob/main/docs/runbook.md#paymentcapturedwithoutpoints"
    );
}

/// Grafana's variables, as a query sees them once Grafana has put in their values.
const GRAFANA_VARIABLES: [(&str, &str); 4] = [
    ("$__rate_interval", "1m"),
    ("$__range", "1h"),
    ("$namespace", NAMESPACE),
    ("$job", ".*"),
];

fn substituted(query: &str) -> String {
    GRAFANA_VARIABLES
        .iter()
        .fold(query.to_owned(), |q, (name, value)| q.replace(name, value))
}

/// Every PromQL of the dashboard: each panel's targets, and the selectors of its variables'
/// `label_values(selector, label)` (a Grafana function, not PromQL), with the label read.
fn dashboard_queries() -> Vec<(String, String)> {
    let path = repo_root().join("deploy/grafana/loyalty.json");
    let dashboard: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut queries = Vec::new();
    for panel in dashboard["panels"].as_array().unwrap() {
        for target in panel["targets"].as_array().into_iter().flatten() {
            let expr = target["expr"].as_str().unwrap();
            queries.push((format!("panel {:?}", panel["title"]), substituted(expr)));
        }
    }
    for variable in dashboard["templating"]["list"].as_array().unwrap() {
        let Some(query) = variable["query"]["query"].as_str() else {
            continue;
        };
        let inner = query
            .strip_prefix("label_values(")
            .and_then(|q| q.strip_suffix(')'))
            .unwrap_or_else(|| {
                panic!(
                    "variable {}: not label_values(...): {query}",
                    variable["name"]
                )
            });
        let (selector, label) = inner.rsplit_once(',').unwrap();
        // The label read must be one the selector's series have: `count by (label)` asks.
        let expr = format!("count by ({}) ({})", label.trim(), substituted(selector));
        queries.push((format!("variable {}", variable["name"]), expr));
    }
    queries
}

#[tokio::test]
async fn every_alert_and_dashboard_query_parses_and_names_only_exported_metrics() {
    let databases = DemoDatabases::create("dashboard").await;
    let stack = Stack::start(&databases.urls()).await;
    let http = reqwest::Client::new();
    // Traffic that makes every series appear: a relayed balance, a point order (ledger
    // entries), a gift-code redemption (credit attempts), a payment event.
    let (order, points) = (stack.order.base.as_str(), stack.points.base.as_str());
    money::balance(&http, order, SARA).await;
    money::fund(databases.points.url(), 1000).await;
    let (status, body) = money::point_order(&http, order, SARA, 1002, "monitoring-1").await;
    assert_eq!(status, 200, "{body}");
    money::add_gift_codes(databases.catalog.url(), "MONITOR", 1, "10").await;
    let (status, body) = money::redeem(&http, order, OMAR, "MONITOR-0000").await;
    assert_eq!(status, 200, "{body}");
    let event = json!({"id": "evt_dashboard", "type": "payment_declined",
        "data": {"reference": "none", "payment_id": "pay_dashboard"}});
    assert_eq!(money::send_event(&http, points, &event).await.0, 200);

    let prometheus = Prometheus::start(&targets(&stack), &[&alert_rules()]).await;
    // The order service's gift-card gauges are set by its retry task, on its own schedule,
    // the point service's payment gauges by its sync task as it starts, and the housekeeping
    // gauges by each service's reader of the last runs as it starts.
    let texts = prometheus
        .wait_for(
            "the gift-card and payment gauges",
            Duration::from_secs(60),
            async || {
                let mut texts = String::new();
                for (_, base) in targets(&stack) {
                    texts.push_str(&testkit::metrics::scrape(&http, base).await);
                }
                let exported = Exported::from_text(&texts);
                (exported.has("gift_card_credit_oldest_pending_seconds")
                    && exported.has("payment_sync_oldest_due_seconds")
                    && exported.has("housekeeping_last_run_timestamp_seconds"))
                .then_some(texts)
            },
        )
        .await;
    let exported = Exported::from_text(&texts);

    let rules = prometheus.rule_queries().await;
    let written = std::fs::read_to_string(alert_rules()).unwrap();
    assert_eq!(
        rules.len(),
        written.matches("- alert: ").count(),
        "Prometheus loaded every rule of alerts.yml: {rules:?}"
    );
    let dashboard = dashboard_queries();
    assert!(dashboard.len() > 20, "{dashboard:?}");
    let mut failures = Vec::new();
    for (name, expr) in rules.iter().chain(&dashboard) {
        if let Some(error) = prometheus.refuses(expr).await {
            failures.push(format!("{name}: Prometheus refuses it: {error}\n  {expr}"));
        }
        for problem in problems(expr, &exported) {
            failures.push(format!("{name}: {problem}\n  {expr}"));
        }
    }
    for (name, expr) in &dashboard {
        if expr.contains(KUBE_STATE_METRICS) {
            failures.push(format!(
                "{name}: the dashboard reads only the services' metrics\n  {expr}"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
