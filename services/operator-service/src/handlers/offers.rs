//! The loyalty back office's offer routes and its audit trail, relayed to the point service
//! (`crate::upstream`), which owns the offers and writes each change with its audit
//! row. Checks here, in order: the token (401), the role (403), the path's offer id (404
//! unless 24 hex characters: it becomes part of the point service's path); the body and the
//! offer are checked there, and its refusals pass on unchanged.

use actix_web::{HttpRequest, HttpResponse, web};
use back_office::audit::Page;
use back_office::offers::{OfferBody, OfferList, OfferRecord, OfferRefusal};
use envelope::Refuses;
use reqwest::Method;

use crate::auth::Operator;
use crate::error::{AdminAnswers, AdminBodyAnswers, OpError, OperatorAnswers};
use crate::handlers::paging;
use crate::query::PageParams;
use crate::state::AppState;
use crate::upstream::UpstreamRefusal;

/// What a change of an offer may be refused for, here or by the point service.
type Refusals = Refuses<(OfferRefusal, UpstreamRefusal)>;

/// An offer's id in the path: 24 hex characters, in either case.
#[derive(serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Path)]
pub struct OfferPath {
    /// 24 hex characters.
    id: String,
}

impl OfferPath {
    /// The id as the point service's path takes it; anything but 24 hex characters names no
    /// offer (and never another path of the point service).
    fn id(&self) -> Result<&str, OpError> {
        if domain::ObjectId::is_valid(&self.id) {
            Ok(&self.id)
        } else {
            Err(OfferRefusal::UnknownOffer(self.id.clone()).into())
        }
    }
}

/// Every offer, on sale or not
///
/// Offers not withdrawn first, then as the app lists them (sequence, then id; missing
/// sequences last). Roles: all five.
#[utoipa::path(get, path = "/offers", operation_id = "listOffers", tag = "offers",
    security(("operator" = ["super_admin", "admin", "merchant_manager", "store_manager", "data_entry"])),
    responses(OperatorAnswers, UpstreamRefusal,
        (status = 200, description = "offers", body = OfferList)))]
pub async fn list(
    _operator: Operator,
    state: web::Data<AppState>,
) -> Result<HttpResponse, OpError> {
    state
        .point_service
        .relay(Method::GET, "/offers", None, None)
        .await
}

/// Create an offer
///
/// The service assigns the 24-hex id; `active` defaults to true, `purchasedPointAmount` and
/// `sequence` to null. A points price below what the offer gives is refused (it would let
/// two clients mint points by buying it for each other). Recorded in the audit trail.
/// Roles: admin, super_admin. Checks: token, role, body.
#[utoipa::path(post, path = "/offers", operation_id = "createOffer", tag = "offers",
    security(("operator" = ["super_admin", "admin"])),
    request_body = OfferBody,
    responses(AdminBodyAnswers, Refusals,
        (status = 201, description = "created", body = OfferRecord)))]
pub async fn create(
    operator: Operator,
    state: web::Data<AppState>,
    raw: web::Bytes,
) -> Result<HttpResponse, OpError> {
    operator.require_admin()?;
    state
        .point_service
        .relay(Method::POST, "/offers", Some(&operator), Some(raw))
        .await
}

/// Change an offer
///
/// The keys sent (at least one), on the offer as it is; the app lists the change at once
/// and an order made before keeps the price it was made at. Recorded in the audit trail.
/// Roles: admin, super_admin. Checks: token, role, path id, body, the offer.
#[utoipa::path(patch, path = "/offers/{id}", operation_id = "updateOffer", tag = "offers",
    security(("operator" = ["super_admin", "admin"])),
    params(OfferPath), request_body = OfferBody,
    responses(AdminBodyAnswers, Refusals,
        (status = 200, description = "changed", body = OfferRecord)))]
pub async fn update(
    operator: Operator,
    state: web::Data<AppState>,
    path: web::Path<OfferPath>,
    raw: web::Bytes,
) -> Result<HttpResponse, OpError> {
    operator.require_admin()?;
    let id = path.id()?;
    state
        .point_service
        .relay(
            Method::PATCH,
            &format!("/offers/{id}"),
            Some(&operator),
            Some(raw),
        )
        .await
}

/// Withdraw an offer
///
/// Never on sale again (the app no longer lists it, and an order naming it is refused);
/// kept for the orders that name it. Recorded in the audit trail. Roles: admin,
/// super_admin. Checks: token, role, path id, the offer.
#[utoipa::path(delete, path = "/offers/{id}", operation_id = "withdrawOffer", tag = "offers",
    security(("operator" = ["super_admin", "admin"])),
    params(OfferPath),
    responses(AdminAnswers, Refusals,
        (status = 200, description = "withdrawn", body = OfferRecord)))]
pub async fn withdraw(
    operator: Operator,
    state: web::Data<AppState>,
    path: web::Path<OfferPath>,
) -> Result<HttpResponse, OpError> {
    operator.require_admin()?;
    let id = path.id()?;
    state
        .point_service
        .relay(
            Method::DELETE,
            &format!("/offers/{id}"),
            Some(&operator),
            None,
        )
        .await
}

/// The loyalty back office's audit trail
///
/// A page of the changes to points data, newest first (`page`, `limit` as the other lists):
/// who (the token's `sub` and role), what, the record before and after. It names clients and
/// their balances (adjustments), so, like the hierarchy's trail: admin, super_admin.
#[utoipa::path(get, path = "/loyalty/audit", operation_id = "listLoyaltyAudit", tag = "offers",
    security(("operator" = ["super_admin", "admin"])), params(PageParams),
    responses(AdminAnswers, UpstreamRefusal,
        (status = 200, description = "page", body = Page)))]
pub async fn audit(
    operator: Operator,
    state: web::Data<AppState>,
    req: HttpRequest,
) -> Result<HttpResponse, OpError> {
    operator.require_admin()?;
    let path = format!("/audit{}", paging(&req).query());
    state
        .point_service
        .relay(Method::GET, &path, None, None)
        .await
}
