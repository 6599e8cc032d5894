//! The relay: the point routes go to the point service with the same method, request target
//! (path and query, byte for byte), body and a fixed list of headers, and its status, body
//! and content type come back unchanged (the body streamed, never parsed). Only the routes of
//! `relayed_routes` (the point routes' contract, which the point service serves) are relayed,
//! and the target goes out exactly as it matched one of them, so nothing under `/internal` or
//! `/webhooks`, and no operational route, can be reached through it: no URL library sees
//! the target on the way (`upstream`).

mod answer;
mod connections;
mod refusal;
mod upstream;

use std::time::Instant;

use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderName as ReadName};
use actix_web::{HttpRequest, HttpResponse, web};
use http_body_util::Full;
use tracing::Instrument;
use tracing::field::Empty;

pub use refusal::RelayRefusal;
use telemetry::metrics::{SeriesCache, count_and_time};
pub use upstream::Upstream;

use crate::error::OrderError;
use crate::state::AppState;

/// The request headers forwarded; everything else (cookies, `X-Internal-Token`, ...) stays
/// here. `traceparent`/`tracestate` are written from the relay's own client span, which
/// continues the caller's trace (without an exporter: the caller's trace context, as it came
/// or new; `telemetry::trace_context`).
pub const FORWARDED_HEADERS: [&str; 5] = [
    "authorization",
    "content-type",
    "accept-language",
    "idempotency-key",
    "x-request-id",
];

/// [`FORWARDED_HEADERS`] named once in each of the two `http` versions, actix's to read a
/// header and hyper's to write it: a header map looked up by `&str` parses the name again
/// (and allocates it, for a name outside the standard list) on every lookup.
const FORWARDED: [(ReadName, http::HeaderName); 5] = [
    named(FORWARDED_HEADERS[0]),
    named(FORWARDED_HEADERS[1]),
    named(FORWARDED_HEADERS[2]),
    named(FORWARDED_HEADERS[3]),
    named(FORWARDED_HEADERS[4]),
];

const fn named(name: &'static str) -> (ReadName, http::HeaderName) {
    (
        ReadName::from_static(name),
        http::HeaderName::from_static(name),
    )
}

/// One relayed route, fixed when the route table is built: its pattern (the metrics' label),
/// its method and which wait applies (the pay routes wait longer).
#[derive(Clone, Copy)]
pub struct Route {
    pattern: &'static str,
    post: bool,
    pay: bool,
}

impl Route {
    pub const fn new(pattern: &'static str, post: bool, pay: bool) -> Self {
        Self { pattern, post, pay }
    }

    fn method(&self) -> http::Method {
        if self.post {
            http::Method::POST
        } else {
            http::Method::GET
        }
    }
}

/// Relays one request of `route`.
///
/// A target that cannot go out byte for byte (see [`Upstream::target`]; actix refuses most
/// such targets before any handler) is not relayed: 400 `VALIDATION_ERROR` `Request target
/// cannot be relayed unchanged` in envelope B. A `#` and what follows it is not part of a
/// request target (RFC 9112, section 3.2): actix's parser drops it before this handler runs,
/// and the rest goes out unchanged.
pub async fn relay(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: web::Bytes,
    route: Route,
) -> Result<HttpResponse, OrderError> {
    let relay = &state.relay;
    let timeout = if route.pay {
        relay.pay_timeout
    } else {
        relay.timeout
    };
    let sent = req.uri().path_and_query().map_or("", |p| p.as_str());
    let uri = Upstream::target(sent).ok_or(RelayRefusal::Target)?;
    let mut upstream = hyper::Request::new(Full::new(body));
    let method = route.method();
    *upstream.method_mut() = method.clone();
    *upstream.uri_mut() = uri;
    let headers = upstream.headers_mut();
    for (read, write) in &FORWARDED {
        for value in req.headers().get_all(read) {
            if let Ok(value) = http::HeaderValue::from_bytes(value.as_bytes()) {
                headers.append(write.clone(), value);
            }
        }
    }
    // The call's client span, child of this request's span; the point service's server span
    // continues it (traceparent/tracestate), as reqwest-tracing did for the other calls.
    let span = tracing::info_span!(
        "relay",
        otel.kind = "client",
        otel.name = method.as_str(),
        otel.status_code = Empty,
        http.request.method = method.as_str(),
        http.route = route.pattern,
        peer.service = "point-service",
        http.response.status_code = Empty,
    );
    telemetry::trace_context::inject(&telemetry::trace_context::for_call(&span), headers);

    let started = Instant::now();
    let deadline = tokio::time::Instant::from_std(started + timeout);
    let outcome = tokio::time::timeout_at(deadline, relay.upstream.send(upstream))
        .instrument(span.clone())
        .await;
    let label = match &outcome {
        Ok(Ok(_)) => "answered",
        Err(_) => "timeout",
        Ok(Err(_)) => "unavailable",
    };
    record_metrics(route.pattern, label, started.elapsed().as_secs_f64());
    let (response, connection) = match outcome {
        Ok(Ok(answered)) => answered,
        Err(_elapsed) => {
            span.record("otel.status_code", "ERROR");
            span.in_scope(|| {
                tracing::error!(
                    upstream = "point-service",
                    timeout_ms = timeout.as_millis() as u64,
                    "relay timed out; outcome unknown"
                );
            });
            return Err(RelayRefusal::TimedOut.into());
        }
        Ok(Err(e)) => {
            // Not resent: the relay carries orders, which the point service may have read
            // (`telemetry::closed_connections`); counted, and alerted on.
            if telemetry::closed_connections::met_closing_connection(&e) {
                telemetry::closed_connections::count(
                    relay.upstream.host(),
                    telemetry::closed_connections::Outcome::Failed,
                );
            }
            // hyper's errors carry no URL, so neither the answer nor the log shows the target or
            // its query (which may carry a caller's data).
            let text = telemetry::client::error_chain(&e);
            span.record("otel.status_code", "ERROR");
            span.in_scope(|| {
                tracing::error!(
                    upstream = "point-service",
                    error.message = %text,
                    "relay could not reach the point service"
                );
            });
            return Err(RelayRefusal::Unavailable(text).into());
        }
    };
    span.record("http.response.status_code", response.status().as_u16());
    let (head, body) = response.into_parts();
    let status = StatusCode::from_u16(head.status.as_u16()).unwrap_or(StatusCode::BAD_GATEWAY);
    let mut reply = HttpResponse::build(status);
    if let Some(content_type) = head.headers.get(http::header::CONTENT_TYPE) {
        reply.insert_header((header::CONTENT_TYPE, content_type.as_bytes()));
    }
    // The point service's answer as it left: the envelope handlers, which see only error
    // answers, must not rewrite it (marking every answer would cost each one a map).
    if status.is_client_error() || status.is_server_error() {
        reply
            .extensions_mut()
            .insert(envelope::error_handlers::Verbatim);
    }
    Ok(reply.body(answer::Streamed::new(body, connection, deadline)))
}

/// `relay_upstream_total{route, outcome}` and `relay_upstream_duration_seconds{route}`.
fn record_metrics(route: &'static str, outcome: &'static str, seconds: f64) {
    thread_local! {
        static SERIES: SeriesCache<(&'static str, &'static str)> = SeriesCache::default();
    }
    let register = |&(route, outcome): &(&'static str, &'static str)| {
        (
            metrics::counter!("relay_upstream_total", "route" => route, "outcome" => outcome),
            metrics::histogram!("relay_upstream_duration_seconds", "route" => route),
        )
    };
    count_and_time(&SERIES, (route, outcome), register, seconds);
}
