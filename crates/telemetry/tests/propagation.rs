//! Outgoing calls carry the W3C trace context of the request that made them, and the trace
//! id continues across the hop, also without a trace exporter (the services' default, in
//! which no OpenTelemetry span is built: `telemetry::trace_context`).

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on purpose

use std::sync::{Arc, Mutex};

use actix_web::{App, HttpRequest, HttpResponse, HttpServer, web};
use telemetry::{LogFormat, TelemetryConfig};

/// A server that records the `traceparent` of every call it gets; its base URL.
fn recording_upstream(seen: Arc<Mutex<Vec<Option<String>>>>) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let upstream = HttpServer::new(move || {
        let sink = seen.clone();
        App::new().route(
            "/echo",
            web::get().to(move |req: HttpRequest| {
                let sink = sink.clone();
                async move {
                    let sent = req.headers().get("traceparent");
                    sink.lock()
                        .unwrap()
                        .push(sent.map(|tp| tp.to_str().unwrap().to_owned()));
                    HttpResponse::Ok().finish()
                }
            }),
        )
    })
    .workers(1)
    .listen(listener)
    .unwrap()
    .run();
    tokio::spawn(upstream);
    format!("http://{addr}")
}

/// An app behind the services' request middleware whose one route calls `upstream` with the
/// services' HTTP client; its base URL.
fn calling_app(upstream: String) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let app = HttpServer::new(move || {
        let upstream = upstream.clone();
        App::new()
            .route(
                "/call",
                web::get().to(move || {
                    let upstream = upstream.clone();
                    async move {
                        let client = telemetry::client::http_client(
                            std::time::Duration::from_secs(5),
                            telemetry::client::DEFAULT_IDLE,
                        )
                        .unwrap();
                        let answer = client.get(format!("{upstream}/echo")).send().await;
                        assert!(answer.unwrap().status().is_success());
                        HttpResponse::Ok().finish()
                    }
                }),
            )
            .wrap(telemetry::http::observe())
    })
    .workers(1)
    .listen(listener)
    .unwrap()
    .run();
    tokio::spawn(app);
    format!("http://{addr}")
}

#[tokio::test]
async fn an_outgoing_call_continues_the_requests_trace_without_an_exporter() {
    let guard = telemetry::init(&TelemetryConfig {
        service_name: "propagation-test",
        log_format: LogFormat::Pretty,
        // A quiet log level must not cut the trace.
        log_filter: "error".into(),
        otlp_endpoint: None,
    })
    .unwrap();
    assert!(!telemetry::trace_context::exporting());

    let seen: Arc<Mutex<Vec<Option<String>>>> = Arc::default();
    let app = calling_app(recording_upstream(seen.clone()));
    let caller = reqwest::Client::new();

    // The caller's trace goes on.
    let sent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    let response = caller
        .get(format!("{app}/call"))
        .header("traceparent", sent)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    // A request that brings none starts one, which its calls carry.
    let response = caller.get(format!("{app}/call")).send().await.unwrap();
    assert_eq!(response.status(), 200);

    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 2);
    let continued = seen[0]
        .as_deref()
        .expect("no traceparent on the first call");
    assert_eq!(
        continued.split('-').nth(1),
        Some("4bf92f3577b34da6a3ce929d0e0e4736"),
        "the call must continue the caller's trace: {continued}"
    );
    let started = seen[1]
        .as_deref()
        .expect("no traceparent on the second call");
    let parts: Vec<&str> = started.split('-').collect();
    assert_eq!(parts.len(), 4, "{started}");
    assert_eq!((parts[0], parts[1].len(), parts[2].len()), ("00", 32, 16));
    assert_ne!(parts[1], "00000000000000000000000000000000");
    assert_ne!(parts[1], "4bf92f3577b34da6a3ce929d0e0e4736");
    guard.shutdown();
}
