//! The loyalty back office's earn-rate table and the trail of the catalog's changes, relayed
//! to the order service (`crate::upstream`), which keeps them. Checks here: the token
//! (401), the role (403); the body and the version are checked there.

use actix_web::{HttpRequest, HttpResponse, web};
use back_office::audit::Page;
use back_office::earn_rates::{EarnRateTable, EarnRateTableBody, RatesRefusal};
use envelope::Refuses;
use reqwest::Method;

use crate::auth::Operator;
use crate::error::{AdminAnswers, AdminBodyAnswers, OpError, OperatorAnswers};
use crate::handlers::paging;
use crate::query::PageParams;
use crate::state::AppState;
use crate::upstream::UpstreamRefusal;

/// The earn-rate table
///
/// The rows as the app reads them (sorted by `amount_from`) and the table's version. Roles:
/// all five.
#[utoipa::path(get, path = "/earn-rates", operation_id = "getEarnRates", tag = "earn rates",
    security(("operator" = ["super_admin", "admin", "merchant_manager", "store_manager", "data_entry"])),
    responses(OperatorAnswers, UpstreamRefusal, (status = 200, description = "table", body = EarnRateTable)))]
pub async fn read(
    _operator: Operator,
    state: web::Data<AppState>,
) -> Result<HttpResponse, OpError> {
    state
        .order_service
        .relay(Method::GET, "/earn-rates", None, None)
        .await
}

/// Replace the earn-rate table
///
/// Whole, from the version read: ordered ranges without gaps or overlaps, the last
/// open-ended. A replacement made from an older version is refused (409). The app reads the
/// new table at once. Recorded in the audit trail. Roles: admin, super_admin. Checks: token,
/// role, body, version.
#[utoipa::path(put, path = "/earn-rates", operation_id = "replaceEarnRates", tag = "earn rates",
    security(("operator" = ["super_admin", "admin"])), request_body = EarnRateTableBody,
    responses(AdminBodyAnswers, Refuses<(RatesRefusal, UpstreamRefusal)>,
        (status = 200, description = "done", body = EarnRateTable)))]
pub async fn replace(
    operator: Operator,
    state: web::Data<AppState>,
    raw: web::Bytes,
) -> Result<HttpResponse, OpError> {
    operator.require_admin()?;
    state
        .order_service
        .relay(Method::PUT, "/earn-rates", Some(&operator), Some(raw))
        .await
}

/// The catalog's loyalty audit trail
///
/// A page of the changes to gift-code batches and the earn-rate table, newest first (`page`,
/// `limit` as the other lists): who (the token's `sub` and role), what, the record before and
/// after, reads of codes included (`/loyalty/audit` has those of points data). Roles: admin,
/// super_admin.
#[utoipa::path(get, path = "/loyalty/catalog-audit", operation_id = "listCatalogLoyaltyAudit", tag = "earn rates",
    security(("operator" = ["super_admin", "admin"])), params(PageParams),
    responses(AdminAnswers, UpstreamRefusal, (status = 200, description = "page", body = Page)))]
pub async fn audit(
    operator: Operator,
    state: web::Data<AppState>,
    req: HttpRequest,
) -> Result<HttpResponse, OpError> {
    operator.require_admin()?;
    let path = format!("/catalog-audit{}", paging(&req).query());
    state
        .order_service
        .relay(Method::GET, &path, None, None)
        .await
}
