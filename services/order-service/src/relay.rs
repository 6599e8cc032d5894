//! The relay: the point routes go to the point service with the same method, path, query
//! and body and a fixed list of headers, and its status, body and content type come back
//! unchanged (the body streamed, never parsed). No other path is relayed, so nothing under
//! `/internal` or `/webhooks` can be reached through it.

use std::time::Instant;

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};

use crate::error::OrderError;
use crate::state::AppState;

/// The request headers forwarded; everything else (cookies, `X-Internal-Token`, ...) stays
/// here. `traceparent`/`tracestate` are written by the traced client from this request's
/// own span, which continues the caller's trace.
pub const FORWARDED_HEADERS: [&str; 5] = [
    "authorization",
    "content-type",
    "accept-language",
    "idempotency-key",
    "x-request-id",
];

/// The two pay routes wait longer (also what the OpenAPI document says of each route).
pub(crate) fn is_pay_route(path: &str) -> bool {
    path.ends_with("/pay/card") || path.ends_with("/pay/session")
}

pub async fn relay(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: web::Bytes,
) -> Result<HttpResponse, OrderError> {
    let relay = &state.relay;
    let timeout = if is_pay_route(req.path()) {
        relay.pay_timeout
    } else {
        relay.timeout
    };
    let path_and_query = req
        .uri()
        .path_and_query()
        .map_or(req.path(), |p| p.as_str());
    let method = reqwest::Method::from_bytes(req.method().as_str().as_bytes())
        .map_err(|e| OrderError::Internal(format!("method not relayable: {e}")))?;
    let mut upstream = relay
        .http
        .request(method, format!("{}{path_and_query}", relay.base))
        .timeout(timeout);
    for name in FORWARDED_HEADERS {
        let value = req
            .headers()
            .get(name)
            .and_then(|v| reqwest::header::HeaderValue::from_bytes(v.as_bytes()).ok());
        if let Some(value) = value {
            upstream = upstream.header(name, value);
        }
    }
    if !body.is_empty() {
        upstream = upstream.body(body);
    }
    let route = telemetry::http::route_pattern(&req).unwrap_or_else(|| "unmatched".to_owned());
    let started = Instant::now();
    let outcome = upstream.send().await;
    let label = match &outcome {
        Ok(_) => "answered",
        Err(e) if is_timeout(e) => "timeout",
        Err(_) => "unavailable",
    };
    metrics::counter!("relay_upstream_total", "route" => route.clone(), "outcome" => label)
        .increment(1);
    metrics::histogram!("relay_upstream_duration_seconds", "route" => route)
        .record(started.elapsed().as_secs_f64());
    let response = match outcome {
        Ok(response) => response,
        Err(e) if is_timeout(&e) => {
            tracing::error!(
                upstream = "point-service",
                timeout_ms = timeout.as_millis() as u64,
                "relay timed out; outcome unknown"
            );
            return Err(OrderError::RelayTimeout);
        }
        Err(e) => {
            tracing::error!(upstream = "point-service", error.message = %e, "relay could not reach the point service");
            return Err(OrderError::RelayUnavailable(error_text(&e)));
        }
    };
    let status =
        StatusCode::from_u16(response.status().as_u16()).unwrap_or(StatusCode::BAD_GATEWAY);
    let mut answer = HttpResponse::build(status);
    if let Some(content_type) = response.headers().get(reqwest::header::CONTENT_TYPE) {
        answer.insert_header(("content-type", content_type.as_bytes()));
    }
    Ok(answer.streaming(response.bytes_stream()))
}

fn is_timeout(e: &reqwest_middleware::Error) -> bool {
    match e {
        reqwest_middleware::Error::Reqwest(e) => e.is_timeout(),
        reqwest_middleware::Error::Middleware(_) => false,
    }
}

/// The error and its causes on one line ("error sending request for url (...): connection refused").
fn error_text(e: &reqwest_middleware::Error) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    #[test]
    fn pay_routes_get_the_longer_wait() {
        assert!(super::is_pay_route(
            "/api/v2/client/point-orders/x/pay/card"
        ));
        assert!(super::is_pay_route(
            "/api/v2/client/point-orders/x/pay/session"
        ));
        assert!(!super::is_pay_route("/api/v2/client/point-orders"));
    }
}
