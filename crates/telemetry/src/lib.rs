//! Logs, traces and metrics, set up the same way in every service.
//!
//! - [`init`]: `tracing` with JSON or human logs; OpenTelemetry spans, exported over OTLP,
//!   when an endpoint is configured.
//! - [`trace_context`]: the W3C trace context of a request and of the calls it makes, with
//!   or without an exporter.
//! - [`http`]: the request middleware (the request's fields, request id among them, on every
//!   log line; `X-Request-Id` on every answer; request metrics). In production the fields are
//!   kept beside the request and written only into lines that are written (`request_fields`);
//!   with an exporter or pretty logs they are the request's span.
//! - [`client`]: the outgoing HTTP client, which sends `traceparent` so one trace spans
//!   the relay, the point service and its auth lookup.
//! - [`metrics`]: the Prometheus recorder behind `/metrics`.

pub mod client;
pub mod closed_connections;
pub mod http;
mod log_fields;
pub mod metrics;
mod request_fields;
mod setup;
#[cfg(test)]
mod test_sink;
pub mod trace_context;

pub use setup::{LogFormat, TelemetryConfig, TelemetryGuard, init};
