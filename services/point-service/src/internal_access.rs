//! Who may call `/internal/v1/credits`: the order service, with its own credential made for
//! this one request, its body included (`service_identity`; the list is
//! `InternalRoute::Credits`). The back office's routes are
//! checked by `back_office::keeper`, which also reads the operator the operator service vouches
//! for.

use actix_web::HttpRequest;
use service_identity::{InternalRoute, Refusal, Request};

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

/// The caller, if it may call `route` and its credential was made for this request and `body`.
pub fn admit(
    req: &HttpRequest,
    state: &AppState,
    route: InternalRoute,
    body: &[u8],
) -> Result<(), PointError> {
    let target = req.uri().path_and_query().map_or("", |pq| pq.as_str());
    let received = Request::received(req.method().as_str(), target, body);
    let admitted = state
        .identity
        .admit(req.headers(), route)
        .and_then(|admitted| admitted.made_for(&received));
    match admitted {
        Ok(_) => Ok(()),
        Err(Refusal::Unauthenticated(_)) => Err(InternalRefusal::Unauthenticated.into()),
        Err(Refusal::NotAdmitted(_)) => Err(InternalRefusal::NotAdmitted.into()),
    }
}
