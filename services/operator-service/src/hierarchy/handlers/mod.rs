//! The hierarchy's operator routes, one function each, by route group (the back office's
//! are served from its table, `crate::back_office`). Every route takes the operator
//! first (401 before anything else), then checks its role (403).

pub mod audit;
pub mod children;
pub mod services;

use serde_json::Value;

/// A raw body as JSON; unreadable is null, which the body rules refuse in their words.
fn json_body(raw: &[u8]) -> Value {
    serde_json::from_slice(raw).unwrap_or(Value::Null)
}
