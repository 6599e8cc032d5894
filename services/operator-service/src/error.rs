//! The service's errors, in the operator shape `{statusCode, message, error}`.

use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError};
use envelope::OperatorError;

/// The 401 of every route: the token is checked before anything else (`crate::auth`).
pub const UNAUTHORIZED_401: &str = "`Unauthorized`: `{\"statusCode\":401,\"message\":\"Unauthorized\",\"error\":\"Unauthorized\"}` for no `Authorization: Bearer <token>`, a bad signature or algorithm, an expired token or an unknown role; checked before anything else";
/// The 403 of the admin routes (`Operator::require_admin`).
pub const FORBIDDEN_403: &str = "`Forbidden resource`: `{\"statusCode\":403,\"message\":\"Forbidden resource\",\"error\":\"Forbidden\"}` for a role other than admin and super_admin";
/// The 413 of a route with a body: actix reads it after the token extractor ran.
pub const TOO_LARGE_413: &str = "`Payload Too Large`: the request body is over 64 KiB (read after the token, before the role check)";
/// Any unexpected failure ([`OpError::Internal`]).
pub const INTERNAL_500: &str =
    "`Internal server error`: an unexpected failure (the raw text goes to the log only)";

envelope::answer_set! {
    /// What a route open to all five roles answers besides its own answers.
    pub OperatorAnswers, envelope::Envelope::Operator, {
        "401" => UNAUTHORIZED_401,
        "500" => INTERNAL_500,
        "503" => db::BUSY_ANSWER,
    }
}

envelope::answer_set! {
    /// What a route for admin and super_admin answers besides its own answers.
    pub AdminAnswers, envelope::Envelope::Operator, {
        "401" => UNAUTHORIZED_401,
        "403" => FORBIDDEN_403,
        "500" => INTERNAL_500,
        "503" => db::BUSY_ANSWER,
    }
}

envelope::answer_set! {
    /// What a route for admin and super_admin that takes a body answers besides its own.
    pub AdminBodyAnswers, envelope::Envelope::Operator, {
        "401" => UNAUTHORIZED_401,
        "403" => FORBIDDEN_403,
        "413" => TOO_LARGE_413,
        "500" => INTERNAL_500,
        "503" => db::BUSY_ANSWER,
    }
}

#[derive(Debug, thiserror::Error)]
pub enum OpError {
    #[error("Unauthorized")]
    Unauthorized,
    #[error("Forbidden resource")]
    Forbidden,
    #[error("{0}")]
    BadRequest(String),
    #[error("Service is not found")]
    NotFound,
    #[error("{}", db::BUSY_MESSAGE)]
    Busy(String),
    #[error("{0}")]
    Internal(String),
}

db::from_failure!(OpError);

impl ResponseError for OpError {
    fn status_code(&self) -> StatusCode {
        match self {
            Self::Unauthorized => StatusCode::UNAUTHORIZED,
            Self::Forbidden => StatusCode::FORBIDDEN,
            Self::BadRequest(_) => StatusCode::BAD_REQUEST,
            Self::NotFound => StatusCode::NOT_FOUND,
            Self::Busy(_) => StatusCode::SERVICE_UNAVAILABLE,
            Self::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    fn error_response(&self) -> HttpResponse {
        match self {
            Self::Internal(raw) => OperatorError::internal(raw).error_response(),
            Self::Busy(raw) => {
                tracing::warn!(error.message = %raw, "database busy");
                OperatorError::new(self.status_code(), self.to_string()).error_response()
            }
            _ => OperatorError::new(self.status_code(), self.to_string()).error_response(),
        }
    }
}
