//! Middleware for incoming requests.

use std::time::Instant;

use actix_web::Error;
use actix_web::HttpMessage;
use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{HeaderName, HeaderValue};
use actix_web::middleware::Next;
use tracing::Span;
use tracing_actix_web::{DefaultRootSpanBuilder, RequestId, RootSpanBuilder, TracingLogger};

pub const REQUEST_ID_HEADER: HeaderName = HeaderName::from_static("x-request-id");

/// The root span of each request: the default fields of `tracing-actix-web` (method, route,
/// status, trace id, `request_id`) plus the `X-Request-Id` a caller sent, if any, so that a
/// relayed request can be matched with the relay's own line.
pub struct RequestSpan;

impl RootSpanBuilder for RequestSpan {
    fn on_request_start(request: &ServiceRequest) -> Span {
        let caller_request_id = request
            .headers()
            .get(&REQUEST_ID_HEADER)
            .and_then(|v| v.to_str().ok())
            .map(|v| v.chars().take(128).collect::<String>())
            .unwrap_or_default();
        tracing_actix_web::root_span!(request, caller_request_id = %caller_request_id)
    }

    fn on_request_end<B: MessageBody>(span: Span, outcome: &Result<ServiceResponse<B>, Error>) {
        DefaultRootSpanBuilder::on_request_end(span, outcome);
    }
}

/// The tracing middleware; wrap it outside [`request_id_header`] and [`record_metrics`].
pub fn tracing_logger() -> TracingLogger<RequestSpan> {
    TracingLogger::<RequestSpan>::new()
}

/// Answers every request with `X-Request-Id`: the id on all of its log lines.
pub async fn request_id_header(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, Error> {
    let request_id = req.extensions().get::<RequestId>().map(|id| id.to_string());
    let mut res = next.call(req).await?;
    if let Some(value) = request_id.and_then(|id| HeaderValue::from_str(&id).ok()) {
        res.headers_mut().insert(REQUEST_ID_HEADER, value);
    }
    Ok(res)
}

/// Counts requests and records their latency by method, route pattern and status. Paths
/// that match no route share the label `unmatched`, so probing cannot grow the series.
pub async fn record_metrics(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, Error> {
    let started = Instant::now();
    let method = req.method().to_string();
    let result = next.call(req).await;
    let (route, status) = match &result {
        Ok(res) => (
            res.request()
                .match_pattern()
                .unwrap_or_else(|| "unmatched".to_owned()),
            res.status().as_u16(),
        ),
        Err(e) => (
            "unmatched".to_owned(),
            e.as_response_error().status_code().as_u16(),
        ),
    };
    let labels = [
        ("method", method),
        ("route", route),
        ("status", status.to_string()),
    ];
    metrics::counter!("http_requests_total", &labels).increment(1);
    metrics::histogram!("http_request_duration_seconds", &labels)
        .record(started.elapsed().as_secs_f64());
    result
}
