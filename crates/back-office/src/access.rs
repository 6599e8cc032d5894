//! Who may call a back-office route of a service that keeps loyalty data (the point service,
//! the order service): the operator service alone, with its own credential
//! (`service_identity`), and for a change, the operator that credential vouches for, whose
//! token and role the operator service checked. Headers prove nothing: the operator is read
//! from the signed credential, which is bound to the one request it was made for. Written once
//! for both services, so that their refusals are one.

use service_identity::{Admitted, Refusal};

use crate::role::Role;
use crate::routes::Route;

envelope::refusals! {
    /// Why a back-office route serves nothing. Its routes refuse in the back office's
    /// envelope (the operator API's body with a `code`), every refusal of theirs, so that the
    /// operator service can pass the body's refusals on unchanged; it never passes on a
    /// 401 or 403 of these, which say that our services are misconfigured, not the panel.
    pub enum BackOfficeRefusal in BackOffice {
        /// No credential, or a forged, expired one, or one made for another service or
        /// another request.
        Unauthenticated => 401 "INVALID_SERVICE_CREDENTIAL", [service_identity::UNAUTHENTICATED];
        /// A good credential of a service other than the operator service.
        NotAdmitted => 403 "CALLER_NOT_ADMITTED", [service_identity::NOT_ADMITTED];
    }
}

envelope::refusals! {
    /// Why a back-office change is not made.
    pub enum ChangeRefusal in BackOffice {
        /// The credential vouches for no operator, or for one with an empty id or role.
        NoOperator => 400 "NO_OPERATOR", "a back-office change needs the operator the operator service vouches for";
        /// The role vouched for is none or not one the route admits
        /// (`crate::routes::Rule::admits`, which the operator service checked too).
        RoleRefused(role: String) => 403 "ROLE_REFUSED", "role {role} may not do this in the back office";
    }
}

impl From<Refusal> for BackOfficeRefusal {
    fn from(refusal: Refusal) -> Self {
        match refusal {
            Refusal::Unauthenticated(_) => BackOfficeRefusal::Unauthenticated,
            Refusal::NotAdmitted(_) => BackOfficeRefusal::NotAdmitted,
        }
    }
}

/// The operator a back-office change is made for.
#[derive(Debug, Clone)]
pub struct ActingOperator {
    /// The operator token's `sub`.
    pub id: String,
    /// The operator token's role.
    pub role: Role,
}

/// The operator the credential vouches for, if `route` admits its role (`NoOperator` when
/// none is named or its id or role is empty, `RoleRefused` for another role or none).
pub fn acting_operator(admitted: &Admitted, route: Route) -> Result<ActingOperator, ChangeRefusal> {
    debug_assert!(
        route.rule().names_operator,
        "{route:?}: the operator service does not name the operator"
    );
    // As the token names them, never trimmed: the audit's who is the token's.
    let vouched = admitted
        .operator
        .as_ref()
        .filter(|o| !o.id.trim().is_empty() && !o.role.trim().is_empty())
        .ok_or(ChangeRefusal::NoOperator)?;
    match vouched.role.parse::<Role>() {
        Ok(role) if route.rule().admits.admits(role) => Ok(ActingOperator {
            id: vouched.id.clone(),
            role,
        }),
        _ => Err(ChangeRefusal::RoleRefused(vouched.role.clone())),
    }
}
