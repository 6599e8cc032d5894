//! With `OTEL_EXPORTER_OTLP_ENDPOINT` set, spans reach the collector over OTLP/HTTP.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on purpose

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use actix_web::{App, HttpResponse, HttpServer, web};
use telemetry::{LogFormat, TelemetryConfig};

#[tokio::test(flavor = "multi_thread")]
async fn spans_are_exported_to_the_configured_collector() {
    let received = Arc::new(AtomicUsize::new(0));
    let counter = received.clone();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let collector = HttpServer::new(move || {
        let counter = counter.clone();
        App::new().route(
            "/v1/traces",
            web::post().to(move |body: web::Bytes| {
                let counter = counter.clone();
                async move {
                    if !body.is_empty() {
                        counter.fetch_add(1, Ordering::SeqCst);
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
    tokio::spawn(collector);

    let guard = telemetry::init(&TelemetryConfig {
        service_name: "export-test",
        log_format: LogFormat::Json,
        log_filter: "info".into(),
        otlp_endpoint: Some(format!("http://{addr}")),
    })
    .unwrap();
    tracing::info_span!("exported span").in_scope(|| tracing::info!("inside"));
    // Shutting down flushes the batch; it blocks, so keep it off the async workers.
    tokio::task::spawn_blocking(move || guard.shutdown())
        .await
        .unwrap();
    assert!(
        received.load(Ordering::SeqCst) >= 1,
        "the collector received no spans"
    );
}
