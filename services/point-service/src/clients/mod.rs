//! HTTP clients of the other services. Every call carries the W3C trace context.

pub mod auth;
pub mod payments;
