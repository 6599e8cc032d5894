//! HTTP clients of the other services. Every call carries the W3C trace context.

pub mod auth;
pub mod payments;

use crate::error::PointError;

/// A call to `service` that got no answer: a 500 whose text names neither the URL (which
/// may carry a credential, `telemetry::client::without_url`) nor the body.
fn unreachable(service: &'static str) -> impl FnOnce(telemetry::client::CallError) -> PointError {
    move |e| {
        let e = telemetry::client::without_url(e);
        PointError::Internal(format!("{service} unreachable: {e}"))
    }
}
