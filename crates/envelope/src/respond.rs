//! The adapter between the error bodies and actix: each envelope is a `ResponseError`
//! (logged once, then its JSON body), and a [`Refused`] answers in its envelope. The only
//! place where an envelope or a refusal meets the web framework.

use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError};
use serde::Serialize;

use crate::envelopes::Answer;
use crate::exposure::Origin;
use crate::{BackOfficeError, Envelope, ErrorA, ErrorB, ErrorC, OperatorError, Refused};

impl Refused {
    /// The answer, in the refusal's envelope; envelope A's `stack` (outside production)
    /// names `origin`, where the refusal was made.
    pub fn error(&self, origin: &Origin) -> actix_web::Error {
        let status = StatusCode::from_u16(self.status).unwrap_or(StatusCode::BAD_REQUEST);
        let message = self.message.clone();
        match self.envelope {
            Envelope::A => ErrorA::made_at(origin, status, message).into(),
            Envelope::B => ErrorB::new(status, self.code, message).into(),
            Envelope::C => ErrorC::new(status, message).into(),
            Envelope::Operator => OperatorError::new(status, message).into(),
            Envelope::BackOffice => BackOfficeError::new(status, self.code, message).into(),
        }
    }

    /// The answer of a refusal made where this is called.
    #[track_caller]
    pub fn response(&self) -> actix_web::HttpResponse {
        self.error(&Origin::here()).error_response()
    }
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
            Envelope::BackOffice => {
                BackOfficeError::new(status, crate::refusal::code_for(status.as_u16()), message)
                    .into()
            }
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

fn json_response<T: Serialize>(status: StatusCode, body: &T) -> HttpResponse {
    HttpResponse::build(status).json(body)
}

/// Logs the error once, then answers with its status and JSON body.
fn answer(error: &impl Answer) -> HttpResponse {
    log_answer(error.status(), error.message(), error.raw());
    json_response(error.status(), &error.body())
}

/// `ResponseError` for each envelope: its status, and [`answer`].
macro_rules! responds {
    ($($envelope:ty),+) => {$(
        impl ResponseError for $envelope {
            fn status_code(&self) -> StatusCode {
                Answer::status(self)
            }
            fn error_response(&self) -> HttpResponse {
                answer(self)
            }
        }
    )+};
}

responds!(ErrorA, ErrorB, ErrorC, OperatorError, BackOfficeError);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Details;
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
            concat!(
                r#"{"success":false,"error":{"code":"VALIDATION_ERROR","#,
                r#""message":"Invalid point-order body","#,
                r#""details":{"formErrors":["Expected object, received null"],"fieldErrors":{}}}}"#
            )
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
    fn back_office_shape_is_the_operator_one_then_its_code() {
        let error = BackOfficeError::new(StatusCode::CONFLICT, "STALE_VERSION", "read it again");
        assert_eq!(
            body_of(&error).1,
            r#"{"statusCode":409,"message":"read it again","error":"Conflict","code":"STALE_VERSION"}"#
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
