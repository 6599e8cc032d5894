//! The service routes: the two lists, one service, create and change.

use actix_web::{HttpRequest, HttpResponse, web};
use catalog_db::ServiceRow;
use envelope::Refuses;

use crate::auth::Operator;
use crate::error::OpError;
use crate::hierarchy::body::{self, BodyRefusal, ServiceBody};
use crate::hierarchy::lookup::{self, ServicePath, ServiceRefusal};
use crate::hierarchy::service_schemas::ServiceVariant;
use crate::hierarchy::services::{self, ServiceView};
use crate::query::{ListFilters, ListPage, ListQuery, PageMeta, PageParams, QueryRefusal};
use crate::state::AppState;

use super::json_body;

/// The services a list route's query matches, read the same way by both lists: the query is
/// refused before a connection is taken. `paged` applies `page` and `limit`.
async fn matching_services(
    state: &AppState,
    req: &HttpRequest,
    paged: bool,
) -> Result<(Vec<ServiceRow>, PageMeta), OpError> {
    let query = ListQuery::parse(req.query_string())?;
    let mut conn = state.pool.get().await?;
    Ok(services::list(&mut conn, &query, paged).await?)
}

/// The paginated admin list of services
///
/// Every service matching the filters, by `ordering`, then id. Roles: all five (super_admin,
/// admin, merchant_manager, store_manager, data_entry).
#[utoipa::path(get, path = "/services",
    params(ListFilters, PageParams),
    responses(QueryRefusal,
        (status = 200, description = "`{data: [services], meta}`", body = ListPage<ServiceView>)))]
pub async fn list_services(
    _operator: Operator,
    state: web::Data<AppState>,
    req: HttpRequest,
) -> Result<HttpResponse, OpError> {
    let (rows, meta) = matching_services(&state, &req, true).await?;
    Ok(HttpResponse::Ok().json(ListPage {
        data: rows.iter().map(ServiceView::from).collect(),
        meta,
    }))
}

/// Every service, unpaginated, without hierarchy fields
///
/// The same filters as the list, every matching row (no pagination; `page` and `limit` are
/// ignored), by `ordering`, then id. Rows omit `hierarchyRole` and `parentId`. Roles: all
/// five.
#[utoipa::path(get, path = "/services/all/without-pagination",
    params(ListFilters),
    responses(QueryRefusal,
        (status = 200, description = "a bare array of services", body = [ServiceVariant])))]
pub async fn list_all_services(
    _operator: Operator,
    state: web::Data<AppState>,
    req: HttpRequest,
) -> Result<HttpResponse, OpError> {
    let (rows, _) = matching_services(&state, &req, false).await?;
    let rows: Vec<_> = rows.iter().map(ServiceView::without_hierarchy).collect();
    Ok(HttpResponse::Ok().json(rows))
}

/// One service
///
/// One service, whatever its role or status. Roles: all five.
#[utoipa::path(get, path = "/services/{id}",
    params(ServicePath),
    responses(ServiceRefusal,
        (status = 200, body = ServiceView)))]
pub async fn get_service(
    _operator: Operator,
    state: web::Data<AppState>,
    path: web::Path<ServicePath>,
) -> Result<HttpResponse, OpError> {
    let id = path.id()?;
    let mut conn = state.pool.get().await?;
    let row = lookup::find(&mut conn, id).await?;
    Ok(HttpResponse::Ok().json(ServiceView::from(&row)))
}

/// Create a service
///
/// Creates a service from the body (defaults: status `active`, logo `""`, ordering 0,
/// hierarchyRole `parent`, serviceType `default`) and records it in the audit trail. Roles:
/// admin, super_admin. Checks: token, role, body.
#[utoipa::path(post, path = "/services",
    request_body = ServiceBody,
    responses(BodyRefusal,
        body::CreateBadRequest,
        (status = 201, description = "the new service", body = ServiceView)))]
pub async fn create_service(
    operator: Operator,
    state: web::Data<AppState>,
    raw: web::Bytes,
) -> Result<HttpResponse, OpError> {
    operator.require_admin()?;
    let fields = body::fields(&json_body(&raw), true)?;
    let mut conn = state.pool.get().await?;
    let created = services::create(&mut conn, &operator, fields).await?;
    Ok(HttpResponse::Created().json(ServiceView::from(&created)))
}

/// Change a service
///
/// Changes the keys sent, in one transaction that locks the service. Changing
/// `hierarchyRole` away from `parent` releases all its children (their parentId becomes
/// null; they stay `child`, unassigned); a `child` changing role is detached from its
/// parent; the answer does not say so. Recorded in the audit trail. Roles: admin,
/// super_admin. Checks: token, role, path id, body, the service (404 after the body).
#[utoipa::path(patch, path = "/services/{id}",
    params(ServicePath), request_body = ServiceBody,
    responses(Refuses<(ServiceRefusal, BodyRefusal)>,
        body::UpdateBadRequest,
        (status = 200, description = "the service after the change", body = ServiceView)))]
pub async fn update_service(
    operator: Operator,
    state: web::Data<AppState>,
    path: web::Path<ServicePath>,
    raw: web::Bytes,
) -> Result<HttpResponse, OpError> {
    operator.require_admin()?;
    let id = path.id()?;
    let fields = body::fields(&json_body(&raw), false)?;
    let mut conn = state.pool.get().await?;
    let updated = services::update(&mut conn, &operator, id, fields).await?;
    Ok(HttpResponse::Ok().json(ServiceView::from(&updated)))
}
