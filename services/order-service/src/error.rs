//! The service's own errors, in envelope C (`{message, statusCode}`). The relay's three
//! errors are envelope B, like the point service's answers they stand in for.

use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError};
use envelope::{ErrorB, ErrorC, RetryAfter};

/// The 500 of a route that reads the database ([`OrderError::Internal`]).
pub const INTERNAL_500: &str = "an unexpected failure: the raw error text outside production, `Internal server error` in production";

envelope::answer_set! {
    /// What a route that reads the database answers besides its own answers: 500 (its raw
    /// text outside production), and 503 when the database is busy ([`OrderError::Busy`]).
    pub DatabaseAnswers, envelope::Envelope::C, {
        "500" => INTERNAL_500,
        "503" => db::BUSY_ANSWER,
    }
}

envelope::answer_set! {
    /// The busy database's 503, for a route that documents its own 500.
    pub BusyAnswers, envelope::Envelope::C, {
        "503" => db::BUSY_ANSWER,
    }
}

#[derive(Debug, thiserror::Error)]
pub enum OrderError {
    #[error("{0}")]
    Invalid(String),
    #[error("{0}")]
    Unauthorized(String),
    #[error("{0}")]
    NotFound(&'static str),
    #[error("{0}")]
    Conflict(&'static str),
    /// A wrong-code limit (`gift_cards::tries`), with when it would let the request through.
    #[error("Too many attempts, try again later")]
    TooManyRequests(RetryAfter),
    /// The credit could not be confirmed; the redemption stays pending, and the service
    /// retries it on its own.
    #[error("The points could not be credited yet, try again")]
    CreditPending(String),
    #[error("{}", db::BUSY_MESSAGE)]
    Busy(String),
    #[error("{0}")]
    Internal(String),
    /// A 500 whose message the spec gives (`AUTH_SERVICE_URL not set`): shown in every
    /// environment, unlike [`OrderError::Internal`]'s raw text.
    #[error("{0}")]
    Misconfigured(&'static str),
    /// 504 `POINT_SERVICE_TIMEOUT` (envelope B).
    #[error("Point service did not respond in time; the request outcome is unknown")]
    RelayTimeout,
    /// 502 `POINT_SERVICE_UNAVAILABLE` (envelope B).
    #[error("Point service unavailable: {0}")]
    RelayUnavailable(String),
    /// 400 `VALIDATION_ERROR` (envelope B): the request target cannot be sent to the point
    /// service byte for byte, so it is not relayed at all.
    #[error("Request target cannot be relayed unchanged")]
    RelayTarget,
}

db::from_failure!(OrderError);

impl OrderError {
    fn status(&self) -> StatusCode {
        match self {
            Self::Invalid(_) | Self::RelayTarget => StatusCode::BAD_REQUEST,
            Self::Unauthorized(_) => StatusCode::UNAUTHORIZED,
            Self::NotFound(_) => StatusCode::NOT_FOUND,
            Self::Conflict(_) => StatusCode::CONFLICT,
            Self::TooManyRequests(_) => StatusCode::TOO_MANY_REQUESTS,
            Self::CreditPending(_) | Self::RelayUnavailable(_) => StatusCode::BAD_GATEWAY,
            Self::Busy(_) => StatusCode::SERVICE_UNAVAILABLE,
            Self::Internal(_) | Self::Misconfigured(_) => StatusCode::INTERNAL_SERVER_ERROR,
            Self::RelayTimeout => StatusCode::GATEWAY_TIMEOUT,
        }
    }
}

impl ResponseError for OrderError {
    fn status_code(&self) -> StatusCode {
        self.status()
    }

    fn error_response(&self) -> HttpResponse {
        match self {
            Self::RelayTimeout => {
                ErrorB::new(self.status(), "POINT_SERVICE_TIMEOUT", self.to_string())
                    .error_response()
            }
            Self::RelayUnavailable(_) => {
                ErrorB::new(self.status(), "POINT_SERVICE_UNAVAILABLE", self.to_string())
                    .error_response()
            }
            Self::RelayTarget => {
                ErrorB::new(self.status(), "VALIDATION_ERROR", self.to_string()).error_response()
            }
            Self::Internal(raw) => ErrorC::internal(raw).error_response(),
            Self::Misconfigured(what) => {
                tracing::error!(error.message = %what, "misconfigured");
                ErrorC::new(self.status(), self.to_string()).error_response()
            }
            Self::Busy(raw) => {
                tracing::warn!(error.message = %raw, "{self}");
                ErrorC::new(self.status(), self.to_string()).error_response()
            }
            Self::TooManyRequests(wait) => {
                let mut response = ErrorC::new(self.status(), self.to_string()).error_response();
                wait.set_on(&mut response);
                response
            }
            // Logged where it happened, with the redemption (`gift_cards::credit::report`).
            Self::CreditPending(_) => ErrorC::new(self.status(), self.to_string()).error_response(),
            _ => ErrorC::new(self.status(), self.to_string()).error_response(),
        }
    }
}
