//! The service's errors: each variant is one status and one message of envelope A.

use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError};
use envelope::{ErrorA, RetryAfter};

/// The spec's 401 message on the auth routes.
pub const UNAUTHORIZED: &str = "Unauthorization";
/// The spec's answer to reset-otp for a phone with no account (the legacy system's
/// sign-up validation leaking through; clients depend on it).
pub const UNKNOWN_PHONE: &str = "Last Name cannot be blank.";

/// A 401 of a route that takes a token, as the document describes it (`crate::caller`).
pub const TOKEN_401: &str = "no token, a token of the wrong kind, or an inactive client";
/// A 500 as the document describes it ([`ErrorA::internal`]).
pub const INTERNAL_500: &str =
    "raw error text and stack outside production; `Internal server error` in production";

envelope::answer_set! {
    /// What a route that reads the database answers besides its own answers: 500, and 503
    /// when the database is busy ([`AuthError::Busy`]).
    pub DatabaseAnswers, envelope::Envelope::A, {
        "500" => INTERNAL_500,
        "503" => db::BUSY_ANSWER,
    }
}

envelope::answer_set! {
    /// What a route that takes a token answers besides its own answers: the token (401) and
    /// the database (500, and 503 when busy).
    pub TokenAnswers, envelope::Envelope::A, {
        "401" => TOKEN_401,
        "500" => INTERNAL_500,
        "503" => db::BUSY_ANSWER,
    }
}

#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    /// No token, a token of the wrong kind, an unknown token or an inactive client.
    #[error("{UNAUTHORIZED}")]
    Unauthorized,
    /// A request that breaks a rule; the message is the spec's.
    #[error("{0}")]
    Invalid(String),
    #[error("{UNKNOWN_PHONE}")]
    UnknownPhone,
    #[error("Invalid or expired code")]
    WrongCode,
    /// An OTP limit (`otp`), with when it would let the request through.
    #[error("Too many attempts, try again later")]
    TooManyRequests(RetryAfter),
    /// A per-client limit (`client_limits`); the message names what was limited.
    #[error("{0}")]
    Limited(&'static str, RetryAfter),
    #[error("{0} not found")]
    NotFound(&'static str),
    /// The SMS gateway refused or could not be reached; nothing was kept.
    #[error("The code could not be sent, try again later")]
    SmsFailed,
    /// Pool exhausted, lock timeout or deadlock: try again.
    #[error("{}", db::BUSY_MESSAGE)]
    Busy(String),
    #[error("{0}")]
    Internal(String),
}

impl AuthError {
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::Invalid(message.into())
    }
}

db::from_failure!(AuthError);

impl AuthError {
    fn status(&self) -> StatusCode {
        match self {
            Self::Unauthorized => StatusCode::UNAUTHORIZED,
            Self::Invalid(_) | Self::UnknownPhone | Self::WrongCode => StatusCode::BAD_REQUEST,
            Self::TooManyRequests(_) | Self::Limited(..) => StatusCode::TOO_MANY_REQUESTS,
            Self::NotFound(_) => StatusCode::NOT_FOUND,
            Self::SmsFailed => StatusCode::BAD_GATEWAY,
            Self::Busy(_) => StatusCode::SERVICE_UNAVAILABLE,
            Self::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
}

impl ResponseError for AuthError {
    fn status_code(&self) -> StatusCode {
        self.status()
    }

    fn error_response(&self) -> HttpResponse {
        let body = match self {
            Self::Internal(raw) => ErrorA::internal(raw),
            Self::Busy(raw) => {
                tracing::warn!(error.message = %raw, "database busy");
                ErrorA::new(self.status(), self.to_string())
            }
            _ => ErrorA::new(self.status(), self.to_string()),
        };
        let mut response = body.error_response();
        if let Self::TooManyRequests(wait) | Self::Limited(_, wait) = self {
            wait.set_on(&mut response);
        }
        response
    }
}
