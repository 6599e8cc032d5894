//! The service's errors, in the operator shape `{statusCode, message, error}`: a refusal
//! (its type says why: `auth::AccessRefusal`, `lookup::ServiceRefusal`, ...), the database
//! busy, or an unexpected failure.

use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError};
use envelope::{OperatorError, Refusal, Refused};

use crate::auth::AccessRefusal;
use crate::hierarchy::body::BodyRefusal;
use crate::hierarchy::children::ChildrenRefusal;
use crate::hierarchy::lookup::ServiceRefusal;
use crate::query::QueryRefusal;

/// A refusal's body as the documents quote it, built as the service sends it.
pub fn shown_body(refusal: &impl Refusal) -> String {
    let status = StatusCode::from_u16(refusal.status()).unwrap_or(StatusCode::BAD_REQUEST);
    let reason = status.canonical_reason().unwrap_or_default();
    format!(
        r#"`{{"statusCode":{},"message":"{refusal}","error":"{reason}"}}`"#,
        status.as_u16()
    )
}

/// Refusals as a document quotes them, each in backticks, joined by `separator`.
pub fn quoted<R: std::fmt::Display>(
    refusals: impl IntoIterator<Item = R>,
    separator: &str,
) -> String {
    refusals
        .into_iter()
        .map(|refusal| format!("`{refusal}`"))
        .collect::<Vec<_>>()
        .join(separator)
}

/// The 401 of every route: the token is checked before anything else (`crate::auth`).
pub fn unauthorized_401() -> String {
    let refusal = AccessRefusal::Unauthenticated;
    format!(
        "`{refusal}`: {} for no `Authorization: Bearer <token>`, a bad signature or algorithm, \
         an expired token or an unknown role; checked before anything else",
        shown_body(&refusal)
    )
}

/// The 403 of the admin routes (`Operator::require_admin`).
pub fn forbidden_403() -> String {
    let refusal = AccessRefusal::NotAdmin;
    format!(
        "`{refusal}`: {} for a role other than admin and super_admin",
        shown_body(&refusal)
    )
}

/// The 403 of the super_admin routes (`back_office::role::Admits::SuperAdmin`).
pub fn forbidden_super_admin_403() -> String {
    let refusal = AccessRefusal::NotAdmin;
    format!(
        "`{refusal}`: {} for a role other than super_admin",
        shown_body(&refusal)
    )
}

/// The 413 of a route with a body: the app's door (`envelope::body_limits`) reads the body
/// before any handler, so it comes before the token's 401 and the role's 403
/// (`a_body_over_64_kib_is_refused_before_the_token_and_the_role_are_read`).
pub const TOO_LARGE_413: &str = "`Payload Too Large`: the request body is over 64 KiB (refused before \
                                 the token and the role are checked)";
/// Any unexpected failure ([`OpError::Internal`]).
pub fn internal_500() -> String {
    format!(
        "`{}`: an unexpected failure (the raw text goes to the log only)",
        envelope::INTERNAL_MESSAGE
    )
}

#[derive(Debug, thiserror::Error)]
pub enum OpError {
    /// A route said no; the refusal carries its status and message.
    #[error("{}", .0.message)]
    Refused(Refused),
    #[error("{}", db::BUSY_MESSAGE)]
    Busy(String),
    #[error("{0}")]
    Internal(String),
}

db::from_failure!(OpError);

// `?` on a refusal of the service's rules: it answers through [`OpError::Refused`].
envelope::refused_from!(
    OpError::Refused:
    AccessRefusal,
    ServiceRefusal,
    QueryRefusal,
    BodyRefusal,
    ChildrenRefusal,
    crate::back_office::upstream::UpstreamRefusal,
    back_office::offers::OfferRefusal,
    back_office::adjustments::AdjustmentRefusal,
    back_office::clients::ClientRefusal,
    back_office::occasions::OccasionRefusal,
    back_office::expiry_policy::ExpiryPolicyRefusal,
    back_office::gift_codes::BatchLookupRefusal,
);

impl ResponseError for OpError {
    fn status_code(&self) -> StatusCode {
        match self {
            Self::Refused(refused) => {
                StatusCode::from_u16(refused.status).unwrap_or(StatusCode::BAD_REQUEST)
            }
            Self::Busy(_) => StatusCode::SERVICE_UNAVAILABLE,
            Self::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    fn error_response(&self) -> HttpResponse {
        match self {
            Self::Refused(refused) => refused.response(),
            Self::Internal(raw) => OperatorError::internal(raw).error_response(),
            Self::Busy(raw) => {
                tracing::warn!(error.message = %raw, "database busy");
                OperatorError::new(self.status_code(), self.to_string()).error_response()
            }
        }
    }
}
