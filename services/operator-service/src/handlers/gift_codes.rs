//! The loyalty back office's gift-code batches, relayed to the order service
//! (`crate::upstream`), which keeps the codes and writes each change with its audit row.
//! Every route but the list is super_admin's alone: an unused code is a bearer voucher, so
//! reading one is holding its points. Checks here, in order: the token (401), the role
//! (403), the path's batch id (404 unless a positive integer: it becomes part of the order
//! service's path); the body and the batch are checked there, and its refusals pass on
//! unchanged.

use actix_web::{HttpRequest, HttpResponse, web};
use back_office::gift_codes::{
    BatchBody, BatchCodes, BatchList, BatchLookupRefusal, BatchRecord, BatchRefusal,
};
use envelope::Refuses;
use reqwest::Method;

use crate::auth::Operator;
use crate::error::{AdminAnswers, OpError, SuperAdminAnswers, SuperAdminBodyAnswers};
use crate::handlers::paging;
use crate::query::PageParams;
use crate::state::AppState;
use crate::upstream::UpstreamRefusal;

/// What a read or a withdrawal of a batch may be refused for, here or by the order service.
type BatchRefusals = Refuses<(BatchLookupRefusal, UpstreamRefusal)>;

/// A batch's id in the path, read as text so that anything else is refused in the back
/// office's words ([`BatchPath::id`]).
#[derive(serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Path)]
pub struct BatchPath {
    /// The batch id: a positive integer (anything else is 404).
    #[param(value_type = i64, minimum = 1, example = 7)]
    id: String,
}

impl BatchPath {
    /// The id as the order service's path takes it: a positive integer, else no batch (and
    /// never another path of the order service).
    fn id(&self) -> Result<u64, OpError> {
        self.id
            .parse::<u64>()
            .ok()
            .filter(|id| *id > 0 && self.id.bytes().all(|b| b.is_ascii_digit()))
            .ok_or_else(|| BatchLookupRefusal::UnknownBatch(self.id.clone()).into())
    }
}

/// The gift-code batches
///
/// A page of them, newest first (`page`, `limit` as the other lists), each with its codes
/// counted by state (no codes). Roles: admin, super_admin.
#[utoipa::path(get, path = "/gift-code-batches", operation_id = "listGiftCodeBatches", tag = "gift codes",
    security(("operator" = ["super_admin", "admin"])), params(PageParams),
    responses(AdminAnswers, UpstreamRefusal, (status = 200, description = "page", body = BatchList)))]
pub async fn list(
    operator: Operator,
    state: web::Data<AppState>,
    req: HttpRequest,
) -> Result<HttpResponse, OpError> {
    operator.require_admin()?;
    let path = format!("/gift-code-batches{}", paging(&req).query());
    state
        .order_service
        .relay(Method::GET, &path, None, None)
        .await
}

/// Issue a gift-code batch
///
/// `count` codes worth `points` each, from a cryptographic generator, optionally beginning
/// with `prefix` and expiring at `expiresAt`. The same `reference` and body again answers
/// the first batch (200) and issues nothing; with another body it is refused (409).
/// Recorded in the audit trail. Roles: super_admin. Checks: token, role, body, reference.
#[utoipa::path(post, path = "/gift-code-batches", operation_id = "issueGiftCodes", tag = "gift codes",
    security(("operator" = ["super_admin"])), request_body = BatchBody,
    responses(SuperAdminBodyAnswers, Refuses<(BatchRefusal, UpstreamRefusal)>,
        (status = 201, description = "issued", body = BatchRecord),
        (status = 200, description = "a retry", body = BatchRecord)))]
pub async fn issue(
    operator: Operator,
    state: web::Data<AppState>,
    raw: web::Bytes,
) -> Result<HttpResponse, OpError> {
    operator.require_super_admin()?;
    state
        .order_service
        .relay(
            Method::POST,
            "/gift-code-batches",
            Some(&operator),
            Some(raw),
        )
        .await
}

/// A gift-code batch with each code's state
///
/// Each code, in code order: unused, being_credited, credited (with the client and when),
/// withdrawn or expired. Recorded in the trail as read by the operator. Roles: super_admin.
#[utoipa::path(get, path = "/gift-code-batches/{id}", operation_id = "getGiftCodeBatch", tag = "gift codes",
    security(("operator" = ["super_admin"])), params(BatchPath),
    responses(SuperAdminAnswers, BatchRefusals, (status = 200, description = "batch", body = BatchCodes)))]
pub async fn detail(
    operator: Operator,
    state: web::Data<AppState>,
    path: web::Path<BatchPath>,
) -> Result<HttpResponse, OpError> {
    operator.require_super_admin()?;
    let id = path.id()?;
    let path = format!("/gift-code-batches/{id}");
    state
        .order_service
        .relay(Method::GET, &path, Some(&operator), None)
        .await
}

/// A gift-code batch's unused codes as CSV, for printing
///
/// `text/csv`: the header `code,points,expires_at`, then one row per unused code in code
/// order (`expires_at` in RFC 3339, empty for never). Recorded in the trail as exported by
/// the operator. Roles: super_admin.
#[utoipa::path(get, path = "/gift-code-batches/{id}/codes.csv", operation_id = "exportGiftCodes", tag = "gift codes",
    security(("operator" = ["super_admin"])), params(BatchPath),
    responses(SuperAdminAnswers, BatchRefusals,
        (status = 200, description = "codes", content_type = "text/csv", body = String)))]
pub async fn export(
    operator: Operator,
    state: web::Data<AppState>,
    path: web::Path<BatchPath>,
) -> Result<HttpResponse, OpError> {
    operator.require_super_admin()?;
    let id = path.id()?;
    let path = format!("/gift-code-batches/{id}/codes.csv");
    state
        .order_service
        .relay(Method::GET, &path, Some(&operator), None)
        .await
}

/// Withdraw a batch's unused codes
///
/// Every code nobody redeemed becomes unredeemable (the app answers 404 for it); a code
/// redeemed keeps its state. Answers the batch after. Recorded in the audit trail. Roles:
/// super_admin.
#[utoipa::path(delete, path = "/gift-code-batches/{id}", operation_id = "withdrawGiftCodes", tag = "gift codes",
    security(("operator" = ["super_admin"])), params(BatchPath),
    responses(SuperAdminAnswers, BatchRefusals, (status = 200, description = "after", body = BatchRecord)))]
pub async fn withdraw(
    operator: Operator,
    state: web::Data<AppState>,
    path: web::Path<BatchPath>,
) -> Result<HttpResponse, OpError> {
    operator.require_super_admin()?;
    let id = path.id()?;
    let path = format!("/gift-code-batches/{id}");
    state
        .order_service
        .relay(Method::DELETE, &path, Some(&operator), None)
        .await
}
