//! Logs, traces and metrics, set up the same way in every service.
//!
//! - [`init`]: `tracing` with JSON or human logs; OpenTelemetry spans for every request,
//!   exported over OTLP only when an endpoint is configured, and the W3C trace context
//!   read from incoming requests.
//! - [`http`]: the request middleware (root span with a request id on every log line,
//!   `X-Request-Id` on every answer, request metrics).
//! - [`client`]: the outgoing HTTP client, which sends `traceparent` so one trace spans
//!   the relay, the point service and its auth lookup.
//! - [`metrics`]: the Prometheus recorder behind `/metrics`.

pub mod client;
pub mod http;
pub mod metrics;
mod setup;

pub use setup::{LogFormat, TelemetryConfig, TelemetryGuard, init};
