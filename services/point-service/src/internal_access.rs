//! Who may call an internal route: a service holding `INTERNAL_API_TOKEN` (`X-Internal-Token`,
//! compared in constant time by `server::internal`). A back-office change also names the
//! operator it is made for, whom the operator service has checked: the audit row's who.

use actix_web::HttpRequest;

use crate::error::PointError;
use crate::state::AppState;

use back_office::access::BAD_TOKEN;
pub use back_office::access::{ActingOperator, BackOfficeRefusal, ChangeRefusal};

envelope::refusals! {
    /// Why an internal route serves nothing.
    pub enum InternalRefusal in B {
        /// `X-Internal-Token` missing or wrong.
        BadToken => 401, [BAD_TOKEN];
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

/// The same check for a back-office route, refused in its envelope, as every keeper does it.
pub fn check_back_office_token(req: &HttpRequest, state: &AppState) -> Result<(), PointError> {
    Ok(back_office::access::check_token(
        req,
        &state.internal_token,
    )?)
}

/// The operator a back-office change is made for, if `route` admits its role
/// (`back_office::routes`).
pub fn acting_operator(
    req: &HttpRequest,
    route: back_office::routes::Route,
) -> Result<ActingOperator, PointError> {
    Ok(back_office::access::acting_operator(req, route)?)
}
