//! The service's errors: each variant is one status, code and message of envelope B (the
//! spec's Errors table). A route's refusals are the types of its contract
//! (`relayed_routes`, the webhook's), held here as the [`Refused`] they answer.

use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError};
use envelope::{Details, ErrorB, Refused, RetryAfter};
use server::caller::CallerError;

#[derive(Debug, thiserror::Error)]
pub enum PointError {
    /// A refusal: its status, code and message come from the refusal's type.
    #[error("{}", .0.message)]
    Refused(Refused),
    /// A refusal that says what was wrong with each field of the body.
    #[error("{}", .0.message)]
    Detailed(Refused, Details),
    /// 401: the caller lookup refused the token or failed (`server::caller::CallerError`).
    #[error("{0}")]
    Unauthorized(String),
    /// 429: a bound on what one client can make the service store (`config::Limits`), with
    /// when it would let the request through (`Retry-After`). A bound no wait lifts (an
    /// order's payment attempts) is a plain refusal and names no time.
    #[error("{}", .0.message)]
    Limited(Refused, RetryAfter),
    /// A 4xx from the payment service, passed through with its own status and body.
    #[error("payment service answered {status}")]
    PaymentRefused {
        status: u16,
        content_type: Option<String>,
        body: actix_web::web::Bytes,
    },
    #[error("{}", db::BUSY_MESSAGE)]
    Busy(String),
    /// 503 with `Retry-After`: a payment event that cannot be decided until a pay call's
    /// answer is recorded; nothing was recorded, so the sender's retry is decided afresh.
    #[error("{0}")]
    RetryLater(&'static str),
    /// 500 `INTERNAL_ERROR` with a message the spec fixes (the caller lookup not configured:
    /// `CallerError::NotConfigured`).
    #[error("{0}")]
    Misconfigured(String),
    /// 500 `INTERNAL_ERROR` [`envelope::INTERNAL_MESSAGE`]; the text goes to the log.
    #[error("{0}")]
    Internal(String),
    /// Answered as [`PointError::Internal`]: a pay call that never reached the payment
    /// service (no connection could be made), so it made no payment, and its attempt is
    /// recorded as such (`payments::attempts::Answer::NotSent`).
    #[error("{0}")]
    PaymentNotSent(String),
}

envelope::answer_set! {
    /// What a route that takes no caller answers besides its own: the database (500; 503
    /// when busy).
    pub DatabaseAnswers, envelope::Envelope::B, {
        "500" => format!(
            "`{}`: an unexpected failure (the raw text goes to the log only)",
            envelope::INTERNAL_MESSAGE
        ),
        "503" => db::BUSY_ANSWER,
    }
}

db::from_failure!(PointError);

// Makes `Err(refusal)?` answer the refusal, for each refusal type of the service's routes.
envelope::refused_from!(
    PointError::Refused:
    relayed_routes::offers::OfferRefusal,
    relayed_routes::offers::OccasionRefusal,
    relayed_routes::offers::OfferIdRefusal,
    relayed_routes::orders::OrderRefusal,
    relayed_routes::orders::PayerRefusal,
    relayed_routes::orders::DescriptionRefusal,
    relayed_routes::orders::OrderLookupRefusal,
    relayed_routes::pay::PayRefusal,
    crate::internal_access::InternalRefusal,
    back_office::offers::OfferRefusal,
    back_office::adjustments::AdjustmentRefusal,
    back_office::clients::ClientRefusal,
    back_office::occasions::OccasionRefusal,
    back_office::expiry_policy::ExpiryPolicyRefusal,
);

/// The caller lookup's failures: a 500 when it is not configured, else a 401.
impl From<CallerError> for PointError {
    fn from(error: CallerError) -> Self {
        match error {
            CallerError::NotConfigured => Self::Misconfigured(error.to_string()),
            other => Self::Unauthorized(other.to_string()),
        }
    }
}

impl PointError {
    fn status(&self) -> StatusCode {
        match self {
            Self::Refused(refused) | Self::Detailed(refused, _) | Self::Limited(refused, _) => {
                StatusCode::from_u16(refused.status).unwrap_or(StatusCode::BAD_REQUEST)
            }
            Self::Unauthorized(_) => StatusCode::UNAUTHORIZED,
            Self::PaymentRefused { status, .. } => {
                StatusCode::from_u16(*status).unwrap_or(StatusCode::BAD_REQUEST)
            }
            Self::Busy(_) | Self::RetryLater(_) => StatusCode::SERVICE_UNAVAILABLE,
            Self::Misconfigured(_) | Self::Internal(_) | Self::PaymentNotSent(_) => {
                StatusCode::INTERNAL_SERVER_ERROR
            }
        }
    }

    fn code(&self) -> &'static str {
        match self {
            Self::Refused(refused) | Self::Detailed(refused, _) | Self::Limited(refused, _) => {
                refused.code
            }
            Self::Misconfigured(_) | Self::Internal(_) | Self::PaymentNotSent(_) => {
                "INTERNAL_ERROR"
            }
            other => ErrorB::code_for(other.status()),
        }
    }
}

impl ResponseError for PointError {
    fn status_code(&self) -> StatusCode {
        self.status()
    }

    fn error_response(&self) -> HttpResponse {
        match self {
            Self::Refused(refused) => refused.response(),
            Self::Detailed(refused, details) => {
                ErrorB::new(self.status(), self.code(), refused.message.as_str())
                    .with_details(details.clone())
                    .error_response()
            }
            Self::PaymentRefused {
                status,
                content_type,
                body,
            } => {
                tracing::info!(
                    http.upstream_status = status,
                    "payment service refused the payment"
                );
                let mut response = HttpResponse::build(self.status());
                if let Some(content_type) = content_type {
                    response.content_type(content_type.as_str());
                }
                response.body(body.clone())
            }
            Self::Internal(raw) | Self::PaymentNotSent(raw) => {
                ErrorB::internal(raw).error_response()
            }
            Self::Misconfigured(message) => {
                tracing::error!(error.message = message, "misconfigured");
                ErrorB::new(self.status(), self.code(), message.as_str()).error_response()
            }
            Self::Busy(raw) => {
                tracing::warn!(error.message = %raw, "database busy");
                ErrorB::new(self.status(), self.code(), self.to_string()).error_response()
            }
            Self::Limited(refused, wait) => {
                let mut response = refused.response();
                wait.set_on(&mut response);
                response
            }
            Self::RetryLater(message) => {
                let mut response =
                    ErrorB::new(self.status(), self.code(), *message).error_response();
                response.headers_mut().insert(
                    actix_web::http::header::RETRY_AFTER,
                    actix_web::http::header::HeaderValue::from_static("1"),
                );
                response
            }
            _ => ErrorB::new(self.status(), self.code(), self.to_string()).error_response(),
        }
    }
}
