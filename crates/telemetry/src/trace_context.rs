//! The W3C trace context of a request and of the calls it makes, with or without an exporter.
//!
//! With `OTEL_EXPORTER_OTLP_ENDPOINT` set, every span goes to OpenTelemetry
//! (`tracing-opentelemetry`): a request's server span continues the caller's `traceparent`,
//! and an outgoing call carries its own client span's context.
//!
//! Without an exporter nothing would ever read a span's timings or attributes, so no
//! OpenTelemetry span is built at all: that work (span data, attribute copies, ids, timing
//! every enter and exit) was about a tenth of a relayed request's CPU time
//! (`docs/benchmarks.md`). The trace still flows: a request's context is the caller's
//! `traceparent`, or a new trace when it sent none, and every outgoing call (the relay, the
//! clients of [`crate::client`]) sends that context on, so the `trace_id` on each service's
//! log lines ties the request together across the system.
//!
//! The W3C propagator is used here directly rather than through OpenTelemetry's global one
//! (which [`crate::init`] sets to the same propagator, for the libraries that read it): the
//! global sits behind a lock that every request took once or twice, on every worker.

use std::sync::atomic::{AtomicBool, Ordering};

use actix_web::http::header::{HeaderMap, HeaderName};
use opentelemetry::Context;
use opentelemetry::propagation::{Extractor, Injector, TextMapPropagator as _};
use opentelemetry::trace::{SpanContext, TraceContextExt, TraceFlags, TraceId, TraceState};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::{IdGenerator, RandomIdGenerator};
use tracing_opentelemetry::OpenTelemetrySpanExt;

static EXPORTING: AtomicBool = AtomicBool::new(false);

/// Whether spans go to OpenTelemetry in this process (an OTLP endpoint is configured).
pub fn exporting() -> bool {
    EXPORTING.load(Ordering::Relaxed)
}

pub(crate) fn set_exporting(on: bool) {
    EXPORTING.store(on, Ordering::Relaxed);
}

/// The W3C headers, named once: a header map looked up by `&str` parses the name into a new
/// `HeaderName` (an allocation for a name outside the standard list) on every lookup.
const TRACEPARENT: HeaderName = HeaderName::from_static("traceparent");
const TRACESTATE: HeaderName = HeaderName::from_static("tracestate");

/// The caller's trace context from its `traceparent`/`tracestate`, if it sent a valid one.
pub fn from_caller(headers: &HeaderMap) -> Option<Context> {
    if !headers.contains_key(TRACEPARENT) {
        return None;
    }
    let context = TraceContextPropagator::new().extract(&Headers(headers));
    context.span().span_context().is_valid().then_some(context)
}

/// The context of a request served without an exporter: the caller's, or a new sampled
/// trace with ids from OpenTelemetry's own generator.
pub fn for_request(headers: &HeaderMap) -> Context {
    from_caller(headers).unwrap_or_else(|| {
        let ids = RandomIdGenerator::default();
        let span = SpanContext::new(
            ids.new_trace_id(),
            ids.new_span_id(),
            TraceFlags::SAMPLED,
            false,
            TraceState::default(),
        );
        Context::new().with_remote_span_context(span)
    })
}

/// The trace id of `context` as 32 lowercase hex digits, as log lines carry it.
pub fn trace_id(context: &Context) -> Option<String> {
    let id: TraceId = context.span().span_context().trace_id();
    (id != TraceId::INVALID).then(|| id.to_string())
}

/// The context an outgoing call made inside `span` sends: the span's own when exporting
/// (a client span, child of the request's), else the request's (set as the current
/// OpenTelemetry context while the request's future runs, by [`crate::http::observe`]).
pub fn for_call(span: &tracing::Span) -> Context {
    if exporting() {
        span.context()
    } else {
        Context::current()
    }
}

/// Writes `traceparent`/`tracestate` of `context` into `headers` (an invalid context writes
/// nothing).
pub fn inject(context: &Context, headers: &mut http::HeaderMap) {
    TraceContextPropagator::new().inject_context(context, &mut HeaderSink(headers));
}

struct Headers<'a>(&'a HeaderMap);

impl Extractor for Headers<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        let value = match key {
            "traceparent" => self.0.get(TRACEPARENT),
            "tracestate" => self.0.get(TRACESTATE),
            other => self.0.get(other),
        };
        value.and_then(|v| v.to_str().ok())
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(|name| name.as_str()).collect()
    }
}

struct HeaderSink<'a>(&'a mut http::HeaderMap);

impl Injector for HeaderSink<'_> {
    fn set(&mut self, key: &str, value: String) {
        let name = match key {
            "traceparent" => Ok(http::HeaderName::from_static("traceparent")),
            "tracestate" => Ok(http::HeaderName::from_static("tracestate")),
            other => http::HeaderName::from_bytes(other.as_bytes()),
        };
        // The value's own bytes become the header's, without a copy.
        if let (Ok(name), Ok(value)) = (name, http::HeaderValue::try_from(value)) {
            self.0.insert(name, value);
        }
    }
}

#[cfg(test)]
mod tests {
    use actix_web::http::header::{HeaderMap, HeaderName, HeaderValue};
    use opentelemetry_sdk::propagation::TraceContextPropagator;

    use super::*;

    fn headers(traceparent: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(
            HeaderName::from_static("traceparent"),
            HeaderValue::from_str(traceparent).unwrap(),
        );
        headers
    }

    #[test]
    fn a_request_continues_the_callers_trace_or_starts_one() {
        opentelemetry::global::set_text_map_propagator(TraceContextPropagator::new());
        let sent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        let context = for_request(&headers(sent));
        assert_eq!(
            trace_id(&context).as_deref(),
            Some("4bf92f3577b34da6a3ce929d0e0e4736")
        );
        let mut out = http::HeaderMap::new();
        inject(&context, &mut out);
        assert_eq!(out["traceparent"], sent);

        for unusable in [
            "",
            "garbage",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
        ] {
            assert!(from_caller(&headers(unusable)).is_none(), "{unusable:?}");
            let fresh = for_request(&headers(unusable));
            let id = trace_id(&fresh).expect("a new trace");
            assert_eq!(id.len(), 32);
            assert_ne!(id, trace_id(&for_request(&HeaderMap::new())).unwrap());
        }
    }
}
