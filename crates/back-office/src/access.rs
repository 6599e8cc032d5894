//! Who may call a back-office route of a service that keeps loyalty data (the point service,
//! the order service): a caller holding `INTERNAL_API_TOKEN` (the operator service), and for
//! a change, the operator it is made for, whose token and role the operator service checked.
//! Written once for both services, so that their refusals are one.

use actix_web::HttpRequest;
use server::Secret;

use crate::role::Role;
use crate::routes::Route;

/// The refusal of a missing or wrong `X-Internal-Token`, in every envelope.
pub const BAD_TOKEN: &str = "invalid internal token";

envelope::refusals! {
    /// Why a back-office route serves nothing. Its routes refuse in the back office's
    /// envelope (the operator API's body with a `code`), every refusal of theirs, so that the
    /// operator service can pass the body's refusals on unchanged; it never passes on a
    /// 401, which is a misconfiguration of ours, not the admin panel's.
    pub enum BackOfficeRefusal in BackOffice {
        /// `X-Internal-Token` missing or wrong.
        BadToken => 401 "INVALID_INTERNAL_TOKEN", [BAD_TOKEN];
    }
}

envelope::refusals! {
    /// Why a back-office change is not made.
    pub enum ChangeRefusal in BackOffice {
        /// `X-Operator-Id` or `X-Operator-Role` missing or empty.
        NoOperator => 400 "NO_OPERATOR", "a back-office change needs X-Operator-Id and X-Operator-Role";
        /// The role named (as sent) is none or not one the route admits
        /// (`crate::routes::Rule::admits`, which the operator service checked too). A keeper
        /// refuses it all the same; the internal token still speaks for any operator
        /// (docs/decisions.md, "The loyalty back office").
        RoleRefused(role: String) => 403 "ROLE_REFUSED", "role {role} may not do this in the back office";
    }
}

/// `BadToken` unless the request carries the internal token.
pub fn check_token(req: &HttpRequest, token: &Secret) -> Result<(), BackOfficeRefusal> {
    if server::internal::token_matches(req, token) {
        Ok(())
    } else {
        Err(BackOfficeRefusal::BadToken)
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

/// The operator the request names for `route`, if the route admits its role (`NoOperator`
/// when either header is missing or empty, `RoleRefused` for another role or none).
pub fn acting_operator(req: &HttpRequest, route: Route) -> Result<ActingOperator, ChangeRefusal> {
    debug_assert!(
        route.rule().names_operator,
        "{route:?}: the operator service does not name the operator"
    );
    let header = |name: &str| {
        req.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            // As the token names them, never trimmed: the audit's who is the token's.
            .filter(|v| !v.trim().is_empty())
            .map(str::to_owned)
    };
    match (
        header(crate::OPERATOR_ID_HEADER),
        header(crate::OPERATOR_ROLE_HEADER),
    ) {
        (Some(id), Some(named)) => match named.parse::<Role>() {
            Ok(role) if route.rule().admits.admits(role) => Ok(ActingOperator { id, role }),
            _ => Err(ChangeRefusal::RoleRefused(named)),
        },
        _ => Err(ChangeRefusal::NoOperator),
    }
}

/// A read's headers, as the documents show them (`check_token` reads them).
#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Header)]
#[allow(dead_code)]
pub struct Read {
    #[param(rename = "X-Internal-Token")]
    token: String,
}

/// A change's headers: the token and the operator it is made for.
#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Header)]
#[allow(dead_code)]
pub struct Change {
    #[param(rename = "X-Internal-Token")]
    token: String,
    #[param(rename = "X-Operator-Id")]
    operator_id: String,
    #[param(rename = "X-Operator-Role")]
    operator_role: String,
}
