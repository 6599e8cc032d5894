//! The service's own errors, in envelope C (`{message, statusCode}`). The relay's three
//! errors are envelope B, like the point service's answers they stand in for.

use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError};
use envelope::{ErrorC, Refused, RetryAfter};
use server::caller::CallerError;

/// The 500 of a route that reads the database ([`OrderError::Internal`]).
pub fn internal_500() -> String {
    format!(
        "an unexpected failure: the raw error text outside production, `{}` in production",
        envelope::INTERNAL_MESSAGE
    )
}

envelope::answer_set! {
    /// What a route that reads the database answers besides its own answers: 500 (its raw
    /// text outside production), and 503 when the database is busy ([`OrderError::Busy`]).
    pub DatabaseAnswers, envelope::Envelope::C, {
        "500" => internal_500(),
        "503" => db::BUSY_ANSWER,
    }
}

envelope::answer_set! {
    /// The busy database's 503, for a route that documents its own 500.
    pub BusyAnswers, envelope::Envelope::C, {
        "503" => db::BUSY_ANSWER,
    }
}

envelope::answer_set! {
    /// What the gift-card route answers besides its own answers: its caller, resolved through
    /// the auth service ([`OrderError::Caller`]: 401, or 500 when the lookup is not
    /// configured), and the database (500; 503 when busy).
    pub CallerAnswers, envelope::Envelope::C, {
        "401" => server::caller::unauthorized_answer(),
        "500" => format!(
            "{}; outside production, an unexpected failure shows its raw text",
            server::caller::internal_answer()
        ),
        "503" => db::BUSY_ANSWER,
    }
}

envelope::refusals! {
    /// A query the route cannot read into its query type: a key sent twice. The app's query
    /// handler (`envelope::error_handlers`) answers it before the handler runs, in the
    /// parser's words and with the key's name; declared here so that the routes that read a
    /// query name it beside their own 400s.
    pub enum QueryRefusal in C {
        KeySentTwice => 400, "Invalid query: Query deserialize error: duplicate field ...";
    }
}

#[derive(Debug, thiserror::Error)]
pub enum OrderError {
    /// Refused by the rules: a refusal type's answer (`gift_cards::RedeemRefusal`,
    /// `stores::StoreRefusal`, ...).
    #[error("{0}")]
    Refused(Refused),
    /// The caller could not be resolved: 401, or a 500 shown in every environment (unlike
    /// [`OrderError::Internal`]'s raw text) when the lookup is not configured.
    #[error("{0}")]
    Caller(CallerError),
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
}

db::from_failure!(OrderError);

impl From<Refused> for OrderError {
    fn from(refused: Refused) -> Self {
        Self::Refused(refused)
    }
}

// `?` on a refusal of the service's rules: it answers through [`OrderError::Refused`].
envelope::refused_from!(
    OrderError::Refused:
    QueryRefusal,
    crate::gift_cards::RedeemRefusal,
    crate::stores::StoreRefusal,
    crate::stores::BranchesRefusal,
    crate::system_categories::ServiceRefusal,
    crate::relay::RelayRefusal,
    back_office::gift_codes::BatchRefusal,
    back_office::gift_codes::BatchLookupRefusal,
    back_office::earn_rates::RatesRefusal,
);

impl OrderError {
    fn status(&self) -> StatusCode {
        match self {
            Self::Refused(refused) => {
                StatusCode::from_u16(refused.status).unwrap_or(StatusCode::BAD_REQUEST)
            }
            Self::Caller(CallerError::NotConfigured) => StatusCode::INTERNAL_SERVER_ERROR,
            Self::Caller(_) => StatusCode::UNAUTHORIZED,
            Self::TooManyRequests(_) => StatusCode::TOO_MANY_REQUESTS,
            Self::CreditPending(_) => StatusCode::BAD_GATEWAY,
            Self::Busy(_) => StatusCode::SERVICE_UNAVAILABLE,
            Self::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
}

impl ResponseError for OrderError {
    fn status_code(&self) -> StatusCode {
        self.status()
    }

    fn error_response(&self) -> HttpResponse {
        match self {
            Self::Refused(refused) => refused.response(),
            Self::Internal(raw) => ErrorC::internal(raw).error_response(),
            Self::Caller(CallerError::NotConfigured) => {
                tracing::error!(error.message = %self, "misconfigured");
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
            Self::CreditPending(_) | Self::Caller(_) => {
                ErrorC::new(self.status(), self.to_string()).error_response()
            }
        }
    }
}

/// What `server::caller::Caller` answers when the caller cannot be resolved.
impl From<CallerError> for OrderError {
    fn from(error: CallerError) -> Self {
        Self::Caller(error)
    }
}
