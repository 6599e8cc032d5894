//! The service's errors, in the operator shape `{statusCode, message, error}`.

use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError};
use envelope::OperatorError;

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
    #[error("The service is busy, try again")]
    Busy(String),
    #[error("{0}")]
    Internal(String),
}

impl From<db::Failure> for OpError {
    fn from(failure: db::Failure) -> Self {
        match failure {
            db::Failure::Busy(raw) => Self::Busy(raw),
            db::Failure::Broken(raw) => Self::Internal(raw),
        }
    }
}

impl From<diesel::result::Error> for OpError {
    fn from(e: diesel::result::Error) -> Self {
        db::Failure::from(e).into()
    }
}

impl From<db::PoolError> for OpError {
    fn from(e: db::PoolError) -> Self {
        db::Failure::from(e).into()
    }
}

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
