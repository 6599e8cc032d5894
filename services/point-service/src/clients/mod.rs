//! HTTP clients of the other services: the auth service's here, the payment service's with
//! the payments (`payments::client`). Every call carries the W3C trace context.

pub mod auth;

use crate::error::PointError;

/// A call to `service` that got no answer: a 500 whose text names neither the URL (which
/// may carry a credential, `telemetry::client::without_url`) nor the body.
pub(crate) fn unreachable(
    service: &'static str,
) -> impl FnOnce(telemetry::client::CallError) -> PointError {
    move |e| {
        let e = telemetry::client::without_url(e);
        PointError::Internal(format!("{service} unreachable: {e}"))
    }
}
