//! The relay: what goes to the point service, what comes back, and its two errors.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::helpers::*;

#[tokio::test]
async fn method_path_query_body_and_the_listed_headers_go_through_nothing_else() {
    let app = spawn_app().await;
    let response = app
        .client
        .post(app.url("/api/v2/client/point-orders?x=1&y=%20z"))
        .header("authorization", "Bearer abc")
        .header("content-type", "application/json")
        .header("accept-language", "ar")
        .header("idempotency-key", "k-1")
        .header("x-request-id", "req-1")
        .header("x-internal-token", "stolen")
        .header("cookie", "session=1")
        .header("host", "app.example")
        .body(r#"{"point_offer_id": "x",  "spaces": "kept"}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(
        response.status(),
        207,
        "the point service's status comes back"
    );
    assert_eq!(
        response.headers()["content-type"],
        "application/vnd.echo+json"
    );
    let echoed: serde_json::Value = response.json().await.unwrap();
    assert_eq!(echoed["method"], "POST");
    assert_eq!(echoed["path"], "/api/v2/client/point-orders");
    assert_eq!(echoed["query"], "x=1&y=%20z");
    assert_eq!(
        echoed["body"], r#"{"point_offer_id": "x",  "spaces": "kept"}"#,
        "the body is not re-parsed"
    );
    let headers = echoed["headers"].as_object().unwrap();
    for (name, value) in [
        ("authorization", "Bearer abc"),
        ("content-type", "application/json"),
        ("accept-language", "ar"),
        ("idempotency-key", "k-1"),
        ("x-request-id", "req-1"),
    ] {
        assert_eq!(headers[name], value, "{name}");
    }
    assert!(
        headers.contains_key("traceparent"),
        "the trace continues into the point service"
    );
    assert!(!headers.contains_key("x-internal-token") && !headers.contains_key("cookie"));
    assert_eq!(
        headers["host"],
        app.point_url.trim_start_matches("http://"),
        "the point service's own host, not the app's"
    );
}

/// The trace goes on through the relay whether or not spans are exported (the tests, like a
/// default deployment, export none): the app's trace id reaches the point service.
#[tokio::test]
async fn the_callers_trace_continues_into_the_point_service() {
    let app = spawn_app().await;
    let sent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    let response = app
        .client
        .get(app.url("/api/v2/client/points"))
        .header("traceparent", sent)
        .send()
        .await
        .unwrap();
    let echoed: serde_json::Value = response.json().await.unwrap();
    let forwarded = echoed["headers"]["traceparent"].as_str().unwrap();
    assert_eq!(
        forwarded.split('-').nth(1),
        Some("4bf92f3577b34da6a3ce929d0e0e4736"),
        "{forwarded}"
    );
}

#[tokio::test]
async fn every_point_route_is_relayed_with_its_method() {
    let app = spawn_app().await;
    let id = "0f1c1f9e-2d0b-4b43-9a52-5d2f0c7e8a11";
    let routes = [
        ("GET", "/api/v2/client/points".to_owned()),
        ("GET", "/api/v2/client/point-history".to_owned()),
        ("GET", "/api/v2/client/point-offers".to_owned()),
        (
            "GET",
            "/api/v2/client/point-offers/64b7f0c2a1b2c3d4e5f60718".to_owned(),
        ),
        ("GET", "/api/v2/client/point-occasions".to_owned()),
        ("POST", "/api/v2/client/point-orders".to_owned()),
        ("POST", "/api/v2/client/point-orders/description".to_owned()),
        ("GET", format!("/api/v2/client/point-orders/{id}")),
        ("POST", format!("/api/v2/client/point-orders/{id}/pay/card")),
        (
            "POST",
            format!("/api/v2/client/point-orders/{id}/pay/session"),
        ),
    ];
    for (method, path) in routes {
        let request = app.client.request(method.parse().unwrap(), app.url(&path));
        let (status, echoed) = answer(request.send().await.unwrap()).await;
        assert_eq!(
            (status, echoed["path"].as_str()),
            (207, Some(path.as_str())),
            "{method} {path}"
        );
    }
}

#[tokio::test]
async fn internal_and_webhook_paths_are_never_relayed() {
    let app = spawn_app().await;
    for path in [
        "/internal/v1/credits",
        "/webhooks/v1/payments",
        "/api/v2/client/../../internal/v1/credits",
    ] {
        let (status, _) = answer(
            app.client
                .post(app.url(path))
                .body("{}")
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(status, 404, "{path}");
    }
    assert!(app.credits.lock().unwrap().is_empty());
}

#[tokio::test]
async fn a_slow_point_service_gives_504_after_the_configured_wait() {
    let app = spawn_app_with(Options {
        relay_timeout: Duration::from_millis(500),
        ..Options::default()
    })
    .await;
    let started = Instant::now();
    let (status, body) = app.get("/api/v2/client/points-faq").await;
    assert_eq!(
        (status, body),
        (
            504,
            json!({"success": false, "error": {"code": "POINT_SERVICE_TIMEOUT",
                     "message": "Point service did not respond in time; the request outcome is unknown"}})
        )
    );
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_millis(450) && waited < Duration::from_secs(2),
        "{waited:?}"
    );
}

#[tokio::test]
async fn an_unreachable_point_service_gives_502_with_the_error_text() {
    let app = spawn_app_with(Options {
        point_service: false,
        ..Options::default()
    })
    .await;
    let (status, body) = app.get("/api/v2/client/points?phone=966500000001").await;
    assert_eq!(status, 502);
    assert_eq!(body["success"], false);
    assert_eq!(body["error"]["code"], "POINT_SERVICE_UNAVAILABLE");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("Point service unavailable: "),
        "{message}"
    );
    assert!(message.len() > "Point service unavailable: ".len());
    // The error text names no outbound URL: not the point service's address, not the
    // relayed target, not its query (which may carry a caller's data).
    for leak in ["http://", "127.0.0.1", "/api/v2", "966500000001"] {
        assert!(!message.contains(leak), "{leak} in {message}");
    }
}
