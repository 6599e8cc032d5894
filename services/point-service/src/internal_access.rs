//! Who may call `/internal/v1/credits`: the order service, with its own credential
//! (`service_identity`; the list is `InternalRoute::Credits`). The back office's routes are
//! checked by `back_office::keeper`, which also reads the operator the operator service vouches
//! for.

use actix_web::HttpRequest;
use service_identity::{InternalRoute, Refusal};

use crate::error::PointError;
use crate::state::AppState;

envelope::refusals! {
    /// Why an internal route serves its caller nothing.
    pub enum InternalRefusal in B {
        /// No credential, or a forged, expired or misdirected one.
        Unauthenticated => 401, [service_identity::UNAUTHENTICATED];
        /// A good credential of a service the route does not admit.
        NotAdmitted => 403, [service_identity::NOT_ADMITTED];
    }
}

/// The caller, if it may call `route`.
pub fn admit(req: &HttpRequest, state: &AppState, route: InternalRoute) -> Result<(), PointError> {
    match state.identity.admit(req.headers(), route) {
        Ok(_) => Ok(()),
        Err(Refusal::Unauthenticated(_)) => Err(InternalRefusal::Unauthenticated.into()),
        Err(Refusal::NotAdmitted(_)) => Err(InternalRefusal::NotAdmitted.into()),
    }
}
