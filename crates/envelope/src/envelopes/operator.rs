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

impl Answer for OperatorError {
    fn status(&self) -> StatusCode {
        self.status
    }
    fn message(&self) -> &str {
        &self.message
    }
    fn raw(&self) -> Option<&str> {
        self.raw.as_deref()
    }
    fn body(&self) -> impl Serialize + '_ {
        OperatorBody {
            status_code: self.status.as_u16(),
            message: &self.message,
            error: self.status.canonical_reason().unwrap_or("Error"),
        }
    }
}

impl fmt::Display for OperatorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.status.as_u16(), self.message)
    }
}

/// The back office's refusal: the operator API's three keys, then `code`.
#[derive(Debug, Clone)]
pub struct BackOfficeError {
    status: StatusCode,
    code: &'static str,
    message: String,
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
        }
    }
}

impl Answer for BackOfficeError {
    fn status(&self) -> StatusCode {
        self.status
    }
    fn message(&self) -> &str {
        &self.message
    }
    fn raw(&self) -> Option<&str> {
        None
    }
    fn body(&self) -> impl Serialize + '_ {
        BackOfficeBody {
            status_code: self.status.as_u16(),
            message: &self.message,
            error: self.status.canonical_reason().unwrap_or("Error"),
            code: self.code,
        }
    }
}

displays_status_and_message!(BackOfficeError);
