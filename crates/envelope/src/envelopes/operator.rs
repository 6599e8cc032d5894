//! The operator API's bodies: its three keys, and the back office's refusal, which adds a
//! code.

use std::fmt;

use actix_web::http::StatusCode;
use serde::Serialize;
use utoipa::ToSchema;

use super::{Answer, INTERNAL_MESSAGE};

/// The operator API's `{statusCode, message, error}`, where `error` is the status's reason
/// phrase (`Bad Request`, `Not Found`, `Forbidden`, ...).
#[derive(Debug, Clone)]
pub struct OperatorError {
    status: StatusCode,
    message: String,
    raw: Option<String>,
}

/// The operator API's error body; `error` is the status's reason phrase (what
/// `OperatorError` answers).
#[derive(Serialize, ToSchema)]
#[schema(as = OperatorError)]
struct OperatorBody<'a> {
    #[serde(rename = "statusCode")]
    status_code: u16,
    message: &'a str,
    /// The status's reason phrase.
    error: &'a str,
}

schema_is_body!(OperatorError, OperatorBody);

impl OperatorError {
    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        Self {
            status,
            message: message.into(),
            raw: None,
        }
    }

    pub fn unauthorized() -> Self {
        Self::new(StatusCode::UNAUTHORIZED, "Unauthorized")
    }

    pub fn forbidden() -> Self {
        Self::new(StatusCode::FORBIDDEN, "Forbidden resource")
    }

    /// 500 [`INTERNAL_MESSAGE`]; the raw text goes to the log only.
    pub fn internal(error: impl fmt::Display) -> Self {
        Self {
            raw: Some(error.to_string()),
            ..Self::new(StatusCode::INTERNAL_SERVER_ERROR, INTERNAL_MESSAGE)
        }
    }

    pub fn message(&self) -> &str {
        &self.message
    }
}

answers_with!(OperatorError, |this| OperatorBody {
    status_code: this.status.as_u16(),
    message: &this.message,
    error: this.status.canonical_reason().unwrap_or("Error"),
});

displays_status_and_message!(OperatorError);

/// The back office's refusal: the operator API's three keys, then `code`.
#[derive(Debug, Clone)]
pub struct BackOfficeError {
    status: StatusCode,
    code: &'static str,
    message: String,
    /// Always none: a refusal has no raw text.
    raw: Option<String>,
}

/// The back office's refusal body, in this key order.
#[derive(Serialize, ToSchema)]
#[schema(as = BackOfficeError)]
struct BackOfficeBody<'a> {
    #[serde(rename = "statusCode")]
    status_code: u16,
    message: &'a str,
    /// The status's reason phrase.
    error: &'a str,
    /// What refused the request, in capitals (`OFFER_NOT_FOUND`, `STALE_VERSION`): each
    /// route's answers list the codes it gives with their messages.
    code: &'a str,
}

schema_is_body!(BackOfficeError, BackOfficeBody);

impl BackOfficeError {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        Self {
            status,
            code,
            message: message.into(),
            raw: None,
        }
    }
}

answers_with!(BackOfficeError, |this| BackOfficeBody {
    status_code: this.status.as_u16(),
    message: &this.message,
    error: this.status.canonical_reason().unwrap_or("Error"),
    code: this.code,
});

displays_status_and_message!(BackOfficeError);
