//! The operator routes, one function each. Every route takes the operator first (401
//! before anything else), then checks its role (403).

use actix_web::{HttpRequest, HttpResponse, web};
use serde::Serialize;
use serde_json::Value;

use catalog_db::ServiceRow;

use crate::auth::Operator;
use crate::error::{AdminAnswers, AdminBodyAnswers, OpError, OperatorAnswers};
use crate::query::{ListPage, ListQuery, Params};
use crate::services::ServiceView;
use crate::state::AppState;
use crate::{audit, body, children, services};

/// The 400 of a path id that is not an integer, as the document describes it.
pub const BAD_ID_400: &str =
    "`Validation failed (numeric string is expected)`: the path id is not an integer";

fn service_id(raw: &str) -> Result<i64, OpError> {
    raw.parse::<i64>()
        .map_err(|_| OpError::BadRequest("Validation failed (numeric string is expected)".into()))
}

/// The children route's answer.
#[derive(Serialize, utoipa::ToSchema)]
pub struct ChildrenUpdated {
    /// Always `Child services updated successfully`.
    message: &'static str,
    /// Always 200.
    #[serde(rename = "statusCode")]
    status_code: u16,
}

fn json_body(raw: &[u8]) -> Value {
    serde_json::from_slice(raw).unwrap_or(Value::Null)
}

#[utoipa::path(get, path = "/services", tag = "services", security(("operator" = ["super_admin", "admin", "merchant_manager", "store_manager", "data_entry"])),
    summary = "The paginated admin list of services",
    description = "Every service matching the filters, by `ordering`, then id. Roles: all five (super_admin, admin, merchant_manager, store_manager, data_entry).",
    params(("hierarchy_role" = Option<Vec<String>>, Query, description = "`parent`, `standalone` or `child`: a repeated key (also `hierarchy_role[]`) or a comma-separated list; omitted lists all roles; an empty or other value is 400"), ("status" = Option<String>, Query, description = "exact match (`active` or `hidden`)"), ("search" = Option<String>, Query, description = "case-insensitive match on `title` and `titleTranslated` (`%` and `_` match themselves); trimmed, empty means none"), ("name" = Option<String>, Query, description = "the same as `search`, used when `search` is absent"), ("page" = Option<i64>, Query, description = "default 1; unreadable or below 1 is 1; at most 1 000 000; never refused"), ("limit" = Option<i64>, Query, description = "default 10; unreadable or below 1 is 10; at most 100; never refused")),
    responses(OperatorAnswers, (status = 200, description = "`{data: [services], meta}`", body = ListPage<ServiceView>),
        (status = 400, description = "`each value in hierarchy_role must be a valid enum value`: a `hierarchy_role` value that is empty or not `parent`, `standalone` or `child`", body = envelope::OperatorError)))]
pub async fn list(
    _operator: Operator,
    state: web::Data<AppState>,
    req: HttpRequest,
) -> Result<HttpResponse, OpError> {
    let query = ListQuery::parse(req.query_string()).map_err(OpError::BadRequest)?;
    let mut conn = state.pool.get().await?;
    let (rows, meta) = services::list(&mut conn, &query, true).await?;
    Ok(HttpResponse::Ok().json(ListPage {
        data: rows.iter().map(ServiceView::from).collect(),
        meta,
    }))
}

#[utoipa::path(get, path = "/services/all/without-pagination", tag = "services", security(("operator" = ["super_admin", "admin", "merchant_manager", "store_manager", "data_entry"])),
    summary = "Every service, unpaginated, without hierarchy fields",
    description = "The same filters as the list, every matching row (no pagination; `page` and `limit` are ignored), by `ordering`, then id. Rows omit `hierarchyRole` and `parentId`. Roles: all five.",
    params(("hierarchy_role" = Option<Vec<String>>, Query, description = "`parent`, `standalone` or `child`: a repeated key (also `hierarchy_role[]`) or a comma-separated list; omitted lists all roles; an empty or other value is 400"), ("status" = Option<String>, Query, description = "exact match (`active` or `hidden`)"), ("search" = Option<String>, Query, description = "case-insensitive match on `title` and `titleTranslated` (`%` and `_` match themselves); trimmed, empty means none"), ("name" = Option<String>, Query, description = "the same as `search`, used when `search` is absent")),
    responses(OperatorAnswers, (status = 200, description = "a bare array of services without `hierarchyRole` and `parentId`", body = [ServiceView]),
        (status = 400, description = "`each value in hierarchy_role must be a valid enum value`: a `hierarchy_role` value that is empty or not `parent`, `standalone` or `child`", body = envelope::OperatorError)))]
pub async fn all(
    _operator: Operator,
    state: web::Data<AppState>,
    req: HttpRequest,
) -> Result<HttpResponse, OpError> {
    let query = ListQuery::parse(req.query_string()).map_err(OpError::BadRequest)?;
    let mut conn = state.pool.get().await?;
    let (rows, _) = services::list(&mut conn, &query, false).await?;
    Ok(HttpResponse::Ok().json(
        rows.iter()
            .map(ServiceView::without_hierarchy)
            .collect::<Vec<_>>(),
    ))
}

#[utoipa::path(get, path = "/services/{id}", tag = "services", security(("operator" = ["super_admin", "admin", "merchant_manager", "store_manager", "data_entry"])),
    summary = "One service",
    description = "One service, whatever its role or status. Roles: all five.",
    params(("id" = String, Path, description = "the service id: an integer", example = "1")),
    responses(OperatorAnswers, (status = 200, description = "the service", body = ServiceView),
        (status = 400, description = BAD_ID_400, body = envelope::OperatorError),
        (status = 404, description = "`Service is not found`", body = envelope::OperatorError)))]
pub async fn detail(
    _operator: Operator,
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> Result<HttpResponse, OpError> {
    let id = service_id(&path)?;
    let mut conn = state.pool.get().await?;
    let row = ServiceRow::find(&mut conn, id)
        .await?
        .ok_or(OpError::NotFound)?;
    Ok(HttpResponse::Ok().json(ServiceView::from(&row)))
}

#[utoipa::path(post, path = "/services", tag = "services", security(("operator" = ["super_admin", "admin"])),
    summary = "Create a service",
    description = "Creates a service from the body (defaults: status `active`, logo `\"\"`, ordering 0, hierarchyRole `parent`, serviceType `default`) and records it in the audit trail. Roles: admin, super_admin. Checks: token, role, body.",
    request_body = crate::body::ServiceBody,
    responses(AdminBodyAnswers, (status = 201, description = "the new service", body = ServiceView),
        (status = 400, description = &body::create_400(), body = envelope::OperatorError)))]
pub async fn create(
    operator: Operator,
    state: web::Data<AppState>,
    raw: web::Bytes,
) -> Result<HttpResponse, OpError> {
    operator.require_admin()?;
    let fields = body::fields(&json_body(&raw), true).map_err(OpError::BadRequest)?;
    let mut conn = state.pool.get().await?;
    let created = services::create(&mut conn, &operator, fields).await?;
    Ok(HttpResponse::Created().json(ServiceView::from(&created)))
}

#[utoipa::path(patch, path = "/services/{id}", tag = "services", security(("operator" = ["super_admin", "admin"])),
    summary = "Change a service",
    description = "Changes the keys sent, in one transaction that locks the service. Changing `hierarchyRole` away from `parent` releases all its children (their parentId becomes null; they stay `child`, unassigned); a `child` changing role is detached from its parent; the answer does not say so. Recorded in the audit trail. Roles: admin, super_admin. Checks: token, role, path id, body, the service.",
    params(("id" = String, Path, description = "the service id: an integer", example = "1")),
    request_body = crate::body::ServiceBody,
    responses(AdminBodyAnswers, (status = 200, description = "the service after the change", body = ServiceView),
        (status = 400, description = &body::update_400(), body = envelope::OperatorError),
        (status = 404, description = "`Service is not found` (after the body is checked)", body = envelope::OperatorError)))]
pub async fn update(
    operator: Operator,
    state: web::Data<AppState>,
    path: web::Path<String>,
    raw: web::Bytes,
) -> Result<HttpResponse, OpError> {
    operator.require_admin()?;
    let id = service_id(&path)?;
    let fields = body::fields(&json_body(&raw), false).map_err(OpError::BadRequest)?;
    let mut conn = state.pool.get().await?;
    let updated = services::update(&mut conn, &operator, id, fields).await?;
    Ok(HttpResponse::Ok().json(ServiceView::from(&updated)))
}

/// The candidates: the 404 for an unknown service and the 400 for a non-parent come before
/// anything else; the query is never refused.
#[utoipa::path(get, path = "/services/{id}/children", tag = "children", security(("operator" = ["super_admin", "admin"])),
    summary = "The children candidates of a parent",
    description = "The rows that may be this parent's children: role `child` and unassigned or already this parent's (a child of another parent is absent, not marked), by `ordering`, then id. The query is never refused. Roles: admin, super_admin. Checks: token, role, path id, the service exists (404), the service is a parent (400), before the query is read.",
    params(("id" = String, Path, description = "the service id: an integer", example = "1"), ("name" = Option<String>, Query, description = "case-insensitive match on `title` and `titleTranslated`; wins over `search`"), ("search" = Option<String>, Query, description = "the same as `name`, used when `name` is absent"), ("status" = Option<String>, Query, description = "exact match (`active` or `hidden`)"), ("page" = Option<i64>, Query, description = "default 1; unreadable or below 1 is 1; at most 1 000 000; never refused"), ("limit" = Option<i64>, Query, description = "default 10; unreadable or below 1 is 10; at most 100; never refused")),
    responses(AdminAnswers, (status = 200, description = "`{data: [candidates with isSelected], meta}`, with no message/statusCode envelope", body = ListPage<ServiceView>),
        (status = 400, description = "`Validation failed (numeric string is expected)`: the path id is not an integer; or `Only a service with hierarchy_role = parent can have child services`: the service is `standalone` or `child` (after the 404)", body = envelope::OperatorError),
        (status = 404, description = "`Service is not found`: unknown service", body = envelope::OperatorError)))]
pub async fn candidates(
    operator: Operator,
    state: web::Data<AppState>,
    path: web::Path<String>,
    req: HttpRequest,
) -> Result<HttpResponse, OpError> {
    operator.require_admin()?;
    let id = service_id(&path)?;
    let mut conn = state.pool.get().await?;
    let parent = ServiceRow::find(&mut conn, id)
        .await?
        .ok_or(OpError::NotFound)?;
    if parent.hierarchy_role != "parent" {
        return Err(OpError::BadRequest(children::NOT_A_PARENT.into()));
    }
    let params = Params::parse(req.query_string());
    let page = params.page();
    let search = params
        .get("name")
        .or_else(|| params.get("search"))
        .map(str::trim)
        .filter(|s| !s.is_empty());
    let (rows, meta) =
        services::candidates(&mut conn, id, search, params.get("status"), &page).await?;
    let data: Vec<_> = rows
        .iter()
        .map(|row| services::ServiceView {
            is_selected: Some(row.parent_id == Some(id)),
            ..ServiceView::from(row)
        })
        .collect();
    Ok(HttpResponse::Ok().json(ListPage { data, meta }))
}

#[utoipa::path(patch, path = "/services/{id}/children", tag = "children", security(("operator" = ["super_admin", "admin"])),
    summary = "Assign and unassign children",
    description = "Assigns and unassigns children of a parent. All checks run before the write and one failure rejects the whole call (nothing is written), in this order: token (401), role (403), path id (400), body types (400), then the spec's six checks: 1 both arrays empty (400), 2 an id in both arrays (400), 3 the path id in either array (400), 4 the path service does not exist (404), 5 it is not a `parent` (400), 6 an assign id does not exist, is not a `child` or belongs to another parent (400, the failing ids in the order sent). Checks 1 to 3 run before the parent is read. Assigning a child already this parent's is a no-op; unassign ids that are not this parent's children are ignored. One transaction locks the parent, then the services to assign in id order; recorded in the audit trail. Roles: admin, super_admin.",
    params(("id" = String, Path, description = "the service id: an integer", example = "1")),
    request_body = crate::children::ChildrenBody,
    responses(AdminBodyAnswers, (status = 200, description = "`{\"message\": \"Child services updated successfully\", \"statusCode\": 200}`", body = ChildrenUpdated),
        (status = 400, description = &children::set_children_400(), body = envelope::OperatorError),
        (status = 404, description = "`Service is not found`: check 4, the path service does not exist", body = envelope::OperatorError)))]
pub async fn set_children(
    operator: Operator,
    state: web::Data<AppState>,
    path: web::Path<String>,
    raw: web::Bytes,
) -> Result<HttpResponse, OpError> {
    operator.require_admin()?;
    let id = service_id(&path)?;
    let (assign, unassign) = children::read(&json_body(&raw), id).map_err(OpError::BadRequest)?;
    let mut conn = state.pool.get().await?;
    services::set_children(&mut conn, &operator, id, &assign, &unassign).await?;
    tracing::info!(operator.id = %operator.id, service.id = id, assigned = ?assign, unassigned = ?unassign, "children updated");
    Ok(HttpResponse::Ok().json(ChildrenUpdated {
        message: "Child services updated successfully",
        status_code: 200,
    }))
}

#[utoipa::path(get, path = "/audit", tag = "audit", security(("operator" = ["super_admin", "admin"])),
    summary = "The audit trail",
    description = "Every write (create, change, children), newest first. Roles: admin, super_admin.",
    params(("page" = Option<i64>, Query, description = "default 1; unreadable or below 1 is 1; at most 1 000 000; never refused"), ("limit" = Option<i64>, Query, description = "default 10; unreadable or below 1 is 10; at most 100; never refused")),
    responses(AdminAnswers, (status = 200, description = "`{data: [entries], meta}`", body = ListPage<audit::Entry>)))]
pub async fn audit(
    operator: Operator,
    state: web::Data<AppState>,
    req: HttpRequest,
) -> Result<HttpResponse, OpError> {
    operator.require_admin()?;
    let params = Params::parse(req.query_string());
    let page = params.page();
    let mut conn = state.pool.get().await?;
    let (entries, meta) = audit::list(&mut conn, &page).await?;
    Ok(HttpResponse::Ok().json(ListPage {
        data: entries,
        meta,
    }))
}
