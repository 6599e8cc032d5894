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

/// The route pattern a request matched (`/api/v2/client/point-offers/{id}`), for span names
/// and metric labels. actix-web finds it by walking every route (regular expressions for the
/// ones with parameters) on each call, and a request asks up to three times (its span, its
/// metrics, the relay's metrics), so the first answer is kept in the request's extensions.
pub fn route_pattern(request: &actix_web::HttpRequest) -> Option<String> {
    #[derive(Clone)]
    struct Matched(Option<String>);
    if let Some(Matched(pattern)) = request.extensions().get::<Matched>() {
        return pattern.clone();
    }
    let pattern = request.match_pattern();
    request.extensions_mut().insert(Matched(pattern.clone()));
    pattern
}

/// The request method as a bounded label: one of the nine standard methods, else `other`.
/// actix-web accepts any method token (`QWERTY123 /x HTTP/1.1`), so the method as sent would
/// let any caller grow the metric series (and the span names a trace backend groups by)
/// without limit. A `&'static str`, so labelling a request allocates nothing.
pub fn method_label(method: &actix_web::http::Method) -> &'static str {
    use actix_web::http::Method;
    match *method {
        Method::GET => "GET",
        Method::HEAD => "HEAD",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::PATCH => "PATCH",
        Method::DELETE => "DELETE",
        Method::OPTIONS => "OPTIONS",
        Method::CONNECT => "CONNECT",
        Method::TRACE => "TRACE",
        _ => "other",
    }
}

/// The root span of each request: the fields of `tracing-actix-web`'s default span (method,
/// route, status, trace id, `request_id`) plus the `X-Request-Id` a caller sent, if any, so
/// that a relayed request can be matched with the relay's own line.
///
/// It is the library's `root_span!` written out for one change: `http.target` is the path
/// without the query string. Query strings carry phone numbers and one-time login codes
/// (`verify-otp?contact_phone=…&code=…`), and the root span's fields are on every log line
/// and exported trace of the request.
pub struct RequestSpan;

impl RootSpanBuilder for RequestSpan {
    fn on_request_start(request: &ServiceRequest) -> Span {
        use tracing::field::Empty;
        use tracing_actix_web::root_span_macro::private as tam;

        let caller_request_id = request
            .headers()
            .get(&REQUEST_ID_HEADER)
            .and_then(|v| v.to_str().ok())
            .map(|v| v.chars().take(128).collect::<String>())
            .unwrap_or_default();
        let user_agent = request
            .headers()
            .get("User-Agent")
            .and_then(|h| h.to_str().ok())
            .unwrap_or("");
        let route = route_pattern(request.request()).unwrap_or_else(|| "default".to_owned());
        let method = method_label(request.method());
        let connection = request.connection_info();
        let span = tracing::info_span!(
            "HTTP request",
            http.method = %method,
            http.route = %route,
            http.flavor = %tam::http_flavor(request.version()),
            http.scheme = %tam::http_scheme(connection.scheme()),
            http.host = %connection.host(),
            http.client_ip = %connection.realip_remote_addr().unwrap_or(""),
            http.user_agent = %user_agent,
            http.target = %request.path(),
            http.status_code = Empty,
            otel.name = %format!("{method} {route}"),
            otel.kind = "server",
            otel.status_code = Empty,
            trace_id = Empty,
            request_id = %tam::get_request_id(request),
            exception.message = Empty,
            exception.details = Empty,
            caller_request_id = %caller_request_id,
        );
        drop(connection);
        // Continues the caller's trace (W3C traceparent) and records trace_id.
        tam::set_otel_parent(request, &span);
        span
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

/// Counts requests and records their latency by method, route pattern and status. Every
/// label is bounded whatever the caller sends: a method outside the standard nine is
/// `other` ([`method_label`]), paths that match no route share the route `unmatched`, and
/// the status is one the service itself answered.
pub async fn record_metrics(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, Error> {
    let started = Instant::now();
    let method = method_label(req.method());
    let result = next.call(req).await;
    let (route, status) = match &result {
        Ok(res) => (
            route_pattern(res.request()).unwrap_or_else(|| "unmatched".to_owned()),
            res.status().as_u16(),
        ),
        Err(e) => (
            "unmatched".to_owned(),
            e.as_response_error().status_code().as_u16(),
        ),
    };
    let labels = [
        metrics::Label::new("method", method),
        metrics::Label::new("route", route),
        metrics::Label::new("status", status.to_string()),
    ];
    metrics::counter!("http_requests_total", labels.iter()).increment(1);
    metrics::histogram!("http_request_duration_seconds", labels.iter())
        .record(started.elapsed().as_secs_f64());
    result
}
