//! The service's errors: each [`Fault`] is one status and one message of envelope A; an
//! [`AuthError`] is a fault and the line that made it.

use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError};
use envelope::exposure::Origin;
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
    /// when the database is busy ([`Fault::Busy`]).
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

/// A failure of the service: what went wrong, and where it was made (envelope A's `stack`
/// outside production). Made by `?` or `.into()` on a [`Fault`] or a database failure, which
/// record their own line, or by [`AuthError::invalid`].
#[derive(Debug, thiserror::Error)]
#[error("{fault}")]
pub struct AuthError {
    fault: Fault,
    origin: Origin,
}

/// What went wrong: each variant is one status and one message.
#[derive(Debug, thiserror::Error)]
pub enum Fault {
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
    /// [`Fault::Invalid`], made where this is called.
    #[track_caller]
    pub fn invalid(message: impl Into<String>) -> Self {
        Fault::Invalid(message.into()).into()
    }
}

db::from_failure!(Fault);

/// `From` for everything a [`Fault`] is made from, recording the line of the `?` (or
/// `.into()`) that converts.
macro_rules! made_where_converted {
    ($($from:ty),+) => {$(
        impl From<$from> for AuthError {
            #[track_caller]
            fn from(from: $from) -> Self {
                Self {
                    fault: Fault::from(from),
                    origin: Origin::here(),
                }
            }
        }
    )+};
}

made_where_converted!(Fault, db::Failure, db::DieselError, db::PoolError);

impl Fault {
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
        self.fault.status()
    }

    fn error_response(&self) -> HttpResponse {
        let origin = &self.origin;
        let body = match &self.fault {
            Fault::Internal(raw) => ErrorA::internal_made_at(origin, raw),
            Fault::Busy(raw) => {
                tracing::warn!(error.message = %raw, "database busy");
                ErrorA::made_at(origin, self.fault.status(), self.fault.to_string())
            }
            fault => ErrorA::made_at(origin, fault.status(), fault.to_string()),
        };
        let mut response = body.error_response();
        if let Fault::TooManyRequests(wait) | Fault::Limited(_, wait) = &self.fault {
            wait.set_on(&mut response);
        }
        response
    }
}
