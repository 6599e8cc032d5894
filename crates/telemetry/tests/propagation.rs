//! Outgoing calls carry the W3C trace context of the request that made them, and the
//! trace id continues across the hop.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on purpose

use std::sync::{Arc, Mutex};

use actix_web::{App, HttpRequest, HttpResponse, HttpServer, web};
use telemetry::{LogFormat, TelemetryConfig};
use tracing::Instrument;

#[tokio::test]
async fn an_outgoing_call_sends_traceparent_of_the_current_trace() {
    let guard = telemetry::init(&TelemetryConfig {
        service_name: "propagation-test",
        log_format: LogFormat::Pretty,
        // A quiet log level must not cut the trace: spans reach OpenTelemetry regardless.
        log_filter: "error".into(),
        otlp_endpoint: None,
    })
    .unwrap();

    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let sink = seen.clone();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let upstream = HttpServer::new(move || {
        let sink = sink.clone();
        App::new().route(
            "/echo",
            web::get().to(move |req: HttpRequest| {
                let sink = sink.clone();
                async move {
                    if let Some(tp) = req.headers().get("traceparent") {
                        sink.lock().unwrap().push(tp.to_str().unwrap().to_owned());
                    }
                    HttpResponse::Ok().finish()
                }
            }),
        )
    })
    .workers(1)
    .listen(listener)
    .unwrap()
    .run();
    let handle = upstream.handle();
    tokio::spawn(upstream);

    let client = telemetry::client::http_client(std::time::Duration::from_secs(5)).unwrap();
    let span = tracing::info_span!("outer request");
    let trace_id = {
        use opentelemetry::trace::TraceContextExt;
        use tracing_opentelemetry::OpenTelemetrySpanExt;
        span.context().span().span_context().trace_id().to_string()
    };
    let response = client
        .get(format!("http://{addr}/echo"))
        .send()
        .instrument(span)
        .await
        .unwrap();
    assert_eq!(response.status(), 200);

    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1, "no traceparent header arrived");
    let parts: Vec<&str> = seen[0].split('-').collect();
    assert_eq!(parts.len(), 4, "{}", seen[0]);
    assert_eq!(parts[0], "00");
    assert_eq!(
        parts[1], trace_id,
        "the call must continue the caller's trace"
    );
    assert_eq!(parts[2].len(), 16);
    handle.stop(false).await;
    guard.shutdown();
}
