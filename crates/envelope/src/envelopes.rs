//! The four error bodies. Each type knows its status and body and nothing of the service
//! that raised it; services map their own error enums onto them.

use std::borrow::Cow;
use std::fmt;

use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError};
use serde::Serialize;
use utoipa::ToSchema;
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::Schema;

use crate::details::Details;
use crate::exposure::{Origin, internals_shown};

/// The message every envelope shows for an unexpected failure in production.
pub const INTERNAL_MESSAGE: &str = "Internal server error";

/// Which of the four bodies a scope answers with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Envelope {
    A,
    B,
    C,
    Operator,
}

impl Envelope {
    /// An error with this envelope's shape; for B the code follows from the status. Made
    /// where this is called (envelope A's `stack`).
    #[track_caller]
    pub fn error(self, status: StatusCode, message: impl Into<String>) -> actix_web::Error {
        let message = message.into();
        match self {
            Envelope::A => ErrorA::new(status, message).into(),
            Envelope::B => ErrorB::new(status, ErrorB::code_for(status), message).into(),
            Envelope::C => ErrorC::new(status, message).into(),
            Envelope::Operator => OperatorError::new(status, message).into(),
        }
    }
}

/// Logs an error once, where it becomes an answer: 5xx at error level with its raw text,
/// the rest at debug (a bad request is the client's business, not the operator's).
fn log_answer(status: StatusCode, message: &str, raw: Option<&str>) {
    if status.is_server_error() {
        tracing::error!(
            http.status_code = status.as_u16(),
            error.message = raw.unwrap_or(message),
            "request failed"
        );
    } else {
        tracing::debug!(
            http.status_code = status.as_u16(),
            error.message = message,
            "request refused"
        );
    }
}

/// `Display` (`<status> <message>`) and `ResponseError` (logged once, then the type itself
/// as the JSON body) for an envelope whose type is its body, with `status`, `message` and
/// `raw` fields.
macro_rules! answers_itself {
    ($envelope:ty) => {
        impl fmt::Display for $envelope {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{} {}", self.status.as_u16(), self.message)
            }
        }

        impl ResponseError for $envelope {
            fn status_code(&self) -> StatusCode {
                self.status
            }
            fn error_response(&self) -> HttpResponse {
                log_answer(self.status, &self.message, self.raw.as_deref());
                json_response(self.status, self)
            }
        }
    };
}

/// The schema of an envelope that answers through a body type of its own is that body's.
macro_rules! schema_is_body {
    ($envelope:ty, $body:ident) => {
        impl utoipa::PartialSchema for $envelope {
            fn schema() -> RefOr<Schema> {
                <$body<'static> as utoipa::PartialSchema>::schema()
            }
        }

        impl ToSchema for $envelope {
            fn name() -> Cow<'static, str> {
                <$body<'static> as ToSchema>::name()
            }

            fn schemas(schemas: &mut Vec<(String, RefOr<Schema>)>) {
                <$body<'static> as ToSchema>::schemas(schemas);
            }
        }
    };
}

/// The message of a 500 in the envelopes that show it (A and C): the raw error text outside
/// production, `Internal server error` in it.
fn shown_internal(raw: &str) -> String {
    if internals_shown() {
        raw.to_owned()
    } else {
        INTERNAL_MESSAGE.to_owned()
    }
}

fn json_response<T: Serialize>(status: StatusCode, body: &T) -> HttpResponse {
    HttpResponse::build(status).json(body)
}

/// Envelope A: `{status, message, stack?}`. Outside production the body also carries
/// `stack`: where the error was made ([`Origin::stack`]).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ErrorA {
    #[serde(serialize_with = "as_u16")]
    #[schema(value_type = u16)]
    status: StatusCode,
    message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    stack: Option<String>,
    #[serde(skip)]
    raw: Option<String>,
}

impl ErrorA {
    /// An error made where this is called.
    #[track_caller]
    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        Self::made_at(&Origin::here(), status, message)
    }

    /// An error made at `origin`: a service's error that recorded where it was made, and
    /// becomes this body only when it answers.
    pub fn made_at(origin: &Origin, status: StatusCode, message: impl Into<String>) -> Self {
        Self {
            status,
            message: message.into(),
            stack: internals_shown().then(|| origin.stack()),
            raw: None,
        }
    }

    /// 500: the raw error text outside production, `Internal server error` in it. Made where
    /// this is called.
    #[track_caller]
    pub fn internal(error: impl fmt::Display) -> Self {
        Self::internal_made_at(&Origin::here(), error)
    }

    /// [`ErrorA::internal`] of an error made at `origin`.
    pub fn internal_made_at(origin: &Origin, error: impl fmt::Display) -> Self {
        let raw = error.to_string();
        let message = shown_internal(&raw);
        Self {
            raw: Some(raw),
            ..Self::made_at(origin, StatusCode::INTERNAL_SERVER_ERROR, message)
        }
    }

    pub fn message(&self) -> &str {
        &self.message
    }
}

answers_itself!(ErrorA);

/// Envelope B: `{success: false, error: {code, message, details?}}`.
#[derive(Debug, Clone)]
pub struct ErrorB {
    status: StatusCode,
    code: String,
    message: String,
    details: Option<Details>,
    raw: Option<String>,
}

/// Envelope B: `{success: false, error: {code, message, details?}}` (what `ErrorB` answers).
#[derive(Serialize, ToSchema)]
#[schema(as = ErrorB)]
struct BodyB<'a> {
    /// Always false.
    success: bool,
    error: InnerB<'a>,
}

#[derive(Serialize, ToSchema)]
#[schema(as = ErrorBInner)]
struct InnerB<'a> {
    code: &'a str,
    message: &'a str,
    /// `{formErrors: [string], fieldErrors: {field: [string]}}` for a body that failed validation.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    details: Option<&'a Details>,
}

schema_is_body!(ErrorB, BodyB);

impl ErrorB {
    pub fn new(status: StatusCode, code: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            status,
            code: code.into(),
            message: message.into(),
            details: None,
            raw: None,
        }
    }

    pub fn with_details(mut self, details: Details) -> Self {
        self.details = Some(details);
        self
    }

    /// 500 `INTERNAL_ERROR` `Internal server error`; the raw text goes to the log only.
    pub fn internal(error: impl fmt::Display) -> Self {
        Self {
            raw: Some(error.to_string()),
            ..Self::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "INTERNAL_ERROR",
                INTERNAL_MESSAGE,
            )
        }
    }

    /// The code a status gets when nothing more specific is known (unknown route, bad JSON).
    pub fn code_for(status: StatusCode) -> &'static str {
        crate::refusal::code_for(status.as_u16())
    }

    pub fn code(&self) -> &str {
        &self.code
    }

    pub fn message(&self) -> &str {
        &self.message
    }

    fn body(&self) -> BodyB<'_> {
        BodyB {
            success: false,
            error: InnerB {
                code: &self.code,
                message: &self.message,
                details: self.details.as_ref(),
            },
        }
    }
}

impl fmt::Display for ErrorB {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {} {}", self.status.as_u16(), self.code, self.message)
    }
}

impl ResponseError for ErrorB {
    fn status_code(&self) -> StatusCode {
        self.status
    }
    fn error_response(&self) -> HttpResponse {
        log_answer(self.status, &self.message, self.raw.as_deref());
        json_response(self.status, &self.body())
    }
}

/// Envelope C: `{message, statusCode}`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ErrorC {
    message: String,
    #[serde(rename = "statusCode", serialize_with = "as_u16")]
    #[schema(value_type = u16)]
    status: StatusCode,
    #[serde(skip)]
    raw: Option<String>,
}

impl ErrorC {
    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            status,
            raw: None,
        }
    }

    /// 500: the raw error text outside production, `Internal server error` in it.
    pub fn internal(error: impl fmt::Display) -> Self {
        let raw = error.to_string();
        Self {
            message: shown_internal(&raw),
            status: StatusCode::INTERNAL_SERVER_ERROR,
            raw: Some(raw),
        }
    }

    pub fn message(&self) -> &str {
        &self.message
    }
}

answers_itself!(ErrorC);

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

    /// 500 `Internal server error`; the raw text goes to the log only.
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

impl fmt::Display for OperatorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.status.as_u16(), self.message)
    }
}

impl ResponseError for OperatorError {
    fn status_code(&self) -> StatusCode {
        self.status
    }
    fn error_response(&self) -> HttpResponse {
        log_answer(self.status, &self.message, self.raw.as_deref());
        let body = OperatorBody {
            status_code: self.status.as_u16(),
            message: &self.message,
            error: self.status.canonical_reason().unwrap_or("Error"),
        };
        json_response(self.status, &body)
    }
}

fn as_u16<S: serde::Serializer>(status: &StatusCode, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_u16(status.as_u16())
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::body::MessageBody;

    fn body_of(error: &dyn ResponseError) -> (u16, String) {
        let response = error.error_response();
        let status = response.status().as_u16();
        let bytes = response.into_body().try_into_bytes().unwrap();
        (status, String::from_utf8(bytes.to_vec()).unwrap())
    }

    #[test]
    fn a_in_production_has_no_stack() {
        let (status, body) = body_of(&ErrorA::new(StatusCode::UNAUTHORIZED, "Unauthorization"));
        assert_eq!(status, 401);
        assert_eq!(body, r#"{"status":401,"message":"Unauthorization"}"#);
    }

    #[tokio::test]
    async fn a_outside_production_has_stack_and_raw_text() {
        let (error, line) =
            crate::exposure::scope(true, async { (ErrorA::internal("db exploded"), line!()) })
                .await;
        let value: serde_json::Value = serde_json::from_str(&body_of(&error).1).unwrap();
        assert_eq!(value["status"], 500);
        assert_eq!(value["message"], "db exploded");
        // Where it was made, not where it answered (`body_of`).
        let stack = value["stack"].as_str().unwrap();
        assert!(
            stack.starts_with(&format!("at {}:{line}:", file!())),
            "{stack}"
        );
        assert!(!stack.contains(".cargo/registry"), "{stack}");
        let keys: Vec<&String> = value.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["status", "message", "stack"]);
    }

    #[test]
    fn a_internal_in_production_hides_raw_text() {
        let (_, body) = body_of(&ErrorA::internal("db exploded"));
        assert_eq!(body, r#"{"status":500,"message":"Internal server error"}"#);
    }

    #[test]
    fn b_shape_with_and_without_details() {
        let error = ErrorB::new(StatusCode::NOT_FOUND, "NOT_FOUND", "point order not found");
        assert_eq!(
            body_of(&error),
            (404, r#"{"success":false,"error":{"code":"NOT_FOUND","message":"point order not found"}}"#.to_owned())
        );
        let error = ErrorB::new(
            StatusCode::BAD_REQUEST,
            "VALIDATION_ERROR",
            "Invalid point-order body",
        )
        .with_details(Details::new().form_error("Expected object, received null"));
        assert_eq!(
            body_of(&error).1,
            r#"{"success":false,"error":{"code":"VALIDATION_ERROR","message":"Invalid point-order body","details":{"formErrors":["Expected object, received null"],"fieldErrors":{}}}}"#
        );
    }

    #[tokio::test]
    async fn b_internal_never_shows_raw_text() {
        let error = crate::exposure::scope(true, async { ErrorB::internal("secret detail") }).await;
        assert_eq!(
            body_of(&error).1,
            r#"{"success":false,"error":{"code":"INTERNAL_ERROR","message":"Internal server error"}}"#
        );
    }

    #[test]
    fn c_shape() {
        let error = ErrorC::new(StatusCode::NOT_FOUND, "The code not exist");
        assert_eq!(
            body_of(&error),
            (
                404,
                r#"{"message":"The code not exist","statusCode":404}"#.to_owned()
            )
        );
    }

    #[test]
    fn operator_shape_uses_reason_phrase() {
        assert_eq!(
            body_of(&OperatorError::unauthorized()).1,
            r#"{"statusCode":401,"message":"Unauthorized","error":"Unauthorized"}"#
        );
        assert_eq!(
            body_of(&OperatorError::forbidden()).1,
            r#"{"statusCode":403,"message":"Forbidden resource","error":"Forbidden"}"#
        );
        assert_eq!(
            body_of(&OperatorError::new(StatusCode::BAD_REQUEST, "x")).1,
            r#"{"statusCode":400,"message":"x","error":"Bad Request"}"#
        );
    }
}
