//! Who may call an internal route: a service holding `INTERNAL_API_TOKEN` (`X-Internal-Token`,
//! compared in constant time by `server::internal`). A back-office change also names the
//! operator it is made for, whom the operator service has checked: the audit row's who.

use actix_web::HttpRequest;

use crate::error::PointError;
use crate::state::AppState;

/// The refusal of a missing or wrong `X-Internal-Token`, in either envelope.
const BAD_TOKEN: &str = "invalid internal token";

envelope::refusals! {
    /// Why an internal route serves nothing.
    pub enum InternalRefusal in B {
        /// `X-Internal-Token` missing or wrong.
        BadToken => 401, [BAD_TOKEN];
    }
}

envelope::refusals! {
    /// Why a back-office route serves nothing. Its routes answer in the operator API's
    /// envelope, every refusal of theirs (a route answers in one envelope), so that the
    /// operator service can pass the body's and the offer's on unchanged; it never passes
    /// on a 401, which is a misconfiguration of ours, not the admin panel's.
    pub enum BackOfficeRefusal in Operator {
        /// `X-Internal-Token` missing or wrong.
        BadToken => 401, [BAD_TOKEN];
    }
}

envelope::refusals! {
    /// Why a back-office change is not made.
    pub enum ChangeRefusal in Operator {
        /// `X-Operator-Id` or `X-Operator-Role` missing or empty.
        NoOperator => 400, "a back-office change needs X-Operator-Id and X-Operator-Role";
    }
}

/// `InternalRefusal::BadToken` unless the request carries the internal token.
pub fn check_token(req: &HttpRequest, state: &AppState) -> Result<(), PointError> {
    if server::internal::token_matches(req, &state.internal_token) {
        Ok(())
    } else {
        Err(InternalRefusal::BadToken.into())
    }
}

/// The same check for a back-office route, refused in its envelope.
pub fn check_back_office_token(req: &HttpRequest, state: &AppState) -> Result<(), PointError> {
    check_token(req, state).map_err(|_| BackOfficeRefusal::BadToken.into())
}

/// The operator a back-office change is made for.
#[derive(Debug, Clone)]
pub struct ActingOperator {
    /// The operator token's `sub`.
    pub id: String,
    /// The operator token's role.
    pub role: String,
}

/// The operator the request names (`NoOperator` when either header is missing or empty).
pub fn acting_operator(req: &HttpRequest) -> Result<ActingOperator, PointError> {
    let header = |name: &str| {
        req.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            // As the token names them, never trimmed: the audit's who is the token's.
            .filter(|v| !v.trim().is_empty())
            .map(str::to_owned)
    };
    match (
        header(back_office::OPERATOR_ID_HEADER),
        header(back_office::OPERATOR_ROLE_HEADER),
    ) {
        (Some(id), Some(role)) => Ok(ActingOperator { id, role }),
        _ => Err(ChangeRefusal::NoOperator.into()),
    }
}
