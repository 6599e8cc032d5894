//! The loyalty back office's occasion routes, relayed to the point service
//! (`crate::upstream`), which owns the occasions and writes each change with its audit
//! row. Checks here, in order: the token (401), the role (403), the path's occasion id (404
//! unless 24 hex characters); the body and the occasion are checked there.

use actix_web::{HttpResponse, web};
use back_office::occasions::{OccasionBody, OccasionList, OccasionRecord, OccasionRefusal};
use envelope::Refuses;
use reqwest::Method;

use crate::auth::Operator;
use crate::error::{AdminAnswers, AdminBodyAnswers, OpError, OperatorAnswers};
use crate::state::AppState;
use crate::upstream::UpstreamRefusal;

/// What a change of an occasion may be refused for, here or by the point service.
type Refusals = Refuses<(OccasionRefusal, UpstreamRefusal)>;

/// An occasion's id in the path.
#[derive(serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Path)]
pub struct OccasionPath {
    /// 24 hex characters.
    id: String,
}

impl OccasionPath {
    /// The id as the point service's path takes it; anything but 24 hex characters names no
    /// occasion (and never another path of the point service).
    fn path(&self) -> Result<String, OpError> {
        if domain::ObjectId::is_valid(&self.id) {
            Ok(format!("/occasions/{}", self.id))
        } else {
            Err(OccasionRefusal::UnknownOccasion(self.id.clone()).into())
        }
    }
}

/// Every occasion, active or not
///
/// The active ones first, then by id. Roles: all five.
#[utoipa::path(get, path = "/occasions", operation_id = "listOccasions", tag = "offers",
    security(("operator" = ["super_admin", "admin", "merchant_manager", "store_manager", "data_entry"])),
    responses(OperatorAnswers, UpstreamRefusal, (status = 200, description = "occasions", body = OccasionList)))]
pub async fn list(
    _operator: Operator,
    state: web::Data<AppState>,
) -> Result<HttpResponse, OpError> {
    state
        .point_service
        .relay(Method::GET, "/occasions", None, None)
        .await
}

/// Create an occasion
///
/// The service assigns the 24-hex id; `occasionAr` defaults to null, `isCustom` to false,
/// `active` to true. Recorded in the audit trail. Roles: admin, super_admin. Checks: token,
/// role, body.
#[utoipa::path(post, path = "/occasions", operation_id = "createOccasion", tag = "offers",
    security(("operator" = ["super_admin", "admin"])), request_body = OccasionBody,
    responses(AdminBodyAnswers, Refusals, (status = 201, description = "created", body = OccasionRecord)))]
pub async fn create(
    operator: Operator,
    state: web::Data<AppState>,
    raw: web::Bytes,
) -> Result<HttpResponse, OpError> {
    operator.require_admin()?;
    state
        .point_service
        .relay(Method::POST, "/occasions", Some(&operator), Some(raw))
        .await
}

/// Change an occasion
///
/// The keys sent (at least one); the app lists the change at once, and `active: true`
/// offers a withdrawn occasion again. Recorded in the audit trail. Roles: admin,
/// super_admin. Checks: token, role, path id, body, the occasion.
#[utoipa::path(patch, path = "/occasions/{id}", operation_id = "updateOccasion", tag = "offers",
    security(("operator" = ["super_admin", "admin"])), params(OccasionPath), request_body = OccasionBody,
    responses(AdminBodyAnswers, Refusals, (status = 200, description = "changed", body = OccasionRecord)))]
pub async fn update(
    operator: Operator,
    state: web::Data<AppState>,
    path: web::Path<OccasionPath>,
    raw: web::Bytes,
) -> Result<HttpResponse, OpError> {
    operator.require_admin()?;
    let path = path.path()?;
    state
        .point_service
        .relay(Method::PATCH, &path, Some(&operator), Some(raw))
        .await
}

/// Withdraw an occasion
///
/// Inactive: no longer offered to the app nor accepted by a new order; the orders that name
/// it keep it. Recorded in the audit trail. Roles: admin, super_admin. Checks: token, role,
/// path id, the occasion.
#[utoipa::path(delete, path = "/occasions/{id}", operation_id = "withdrawOccasion", tag = "offers",
    security(("operator" = ["super_admin", "admin"])), params(OccasionPath),
    responses(AdminAnswers, Refusals, (status = 200, description = "withdrawn", body = OccasionRecord)))]
pub async fn withdraw(
    operator: Operator,
    state: web::Data<AppState>,
    path: web::Path<OccasionPath>,
) -> Result<HttpResponse, OpError> {
    operator.require_admin()?;
    let path = path.path()?;
    state
        .point_service
        .relay(Method::DELETE, &path, Some(&operator), None)
        .await
}
