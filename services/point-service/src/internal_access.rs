//! Who may call an internal route: a service holding `INTERNAL_API_TOKEN` (`X-Internal-Token`,
//! compared in constant time by `server::internal`). The back office's routes are checked by
//! `back_office::keeper`, which also reads the operator a change is made for.

use actix_web::HttpRequest;

use crate::error::PointError;
use crate::state::AppState;

use back_office::access::BAD_TOKEN;

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
