//! The loyalty back office's expiry policy, relayed to the point service
//! (`crate::upstream`), which owns the settings. Checks here: the token (401), the role
//! (403); the body and the version are checked there.

use actix_web::{HttpResponse, web};
use back_office::expiry_policy::{ExpiryPolicy, ExpiryPolicyBody, ExpiryPolicyRefusal};
use envelope::Refuses;
use reqwest::Method;

use crate::auth::Operator;
use crate::error::{AdminBodyAnswers, OpError, OperatorAnswers};
use crate::state::AppState;
use crate::upstream::UpstreamRefusal;

/// The expiry policy
///
/// Whether points expire, and after how many days without an earn; its version. Roles: all
/// five.
#[utoipa::path(get, path = "/expiry-policy", operation_id = "getExpiryPolicy", tag = "offers",
    security(("operator" = ["super_admin", "admin", "merchant_manager", "store_manager", "data_entry"])),
    responses(OperatorAnswers, UpstreamRefusal, (status = 200, description = "policy", body = ExpiryPolicy)))]
pub async fn read(
    _operator: Operator,
    state: web::Data<AppState>,
) -> Result<HttpResponse, OpError> {
    state
        .point_service
        .relay(Method::GET, "/expiry-policy", None, None)
        .await
}

/// Replace the expiry policy
///
/// Whole, from the version read: a replacement made from an older version is refused (409),
/// so that of two operators editing at once the second does not undo the first. The
/// balance's `pointsExpirationDate` and the next expiry run follow it at once. Recorded in
/// the audit trail. Roles: admin, super_admin. Checks: token, role, body, version.
#[utoipa::path(put, path = "/expiry-policy", operation_id = "replaceExpiryPolicy", tag = "offers",
    security(("operator" = ["super_admin", "admin"])), request_body = ExpiryPolicyBody,
    responses(AdminBodyAnswers, Refuses<(ExpiryPolicyRefusal, UpstreamRefusal)>,
        (status = 200, description = "replaced", body = ExpiryPolicy)))]
pub async fn replace(
    operator: Operator,
    state: web::Data<AppState>,
    raw: web::Bytes,
) -> Result<HttpResponse, OpError> {
    operator.require_admin()?;
    state
        .point_service
        .relay(Method::PUT, "/expiry-policy", Some(&operator), Some(raw))
        .await
}
