//! The operator routes, one function each. Every route takes the operator first (401
//! before anything else), then checks its role (403).

use actix_web::{HttpRequest, HttpResponse, web};
use serde_json::{Value, json};

use crate::auth::Operator;
use crate::error::OpError;
use crate::query::{ListQuery, Params};
use crate::state::AppState;
use crate::{audit, body, children, services};

fn service_id(raw: &str) -> Result<i64, OpError> {
    raw.parse::<i64>()
        .map_err(|_| OpError::BadRequest("Validation failed (numeric string is expected)".into()))
}

fn json_body(raw: &[u8]) -> Value {
    serde_json::from_slice(raw).unwrap_or(Value::Null)
}

pub async fn list(
    _operator: Operator,
    state: web::Data<AppState>,
    req: HttpRequest,
) -> Result<HttpResponse, OpError> {
    let query = ListQuery::parse(req.query_string()).map_err(OpError::BadRequest)?;
    let mut conn = state.pool.get().await?;
    let (rows, meta) = services::list(&mut conn, &query, true).await?;
    Ok(HttpResponse::Ok().json(json!({"data": rows.iter().map(services::ServiceRow::view).collect::<Vec<_>>(), "meta": meta})))
}

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
            .map(services::ServiceRow::view_without_hierarchy)
            .collect::<Vec<_>>(),
    ))
}

pub async fn detail(
    _operator: Operator,
    state: web::Data<AppState>,
    path: web::Path<String>,
) -> Result<HttpResponse, OpError> {
    let id = service_id(&path)?;
    let mut conn = state.pool.get().await?;
    let row = services::find(&mut conn, id)
        .await?
        .ok_or(OpError::NotFound)?;
    Ok(HttpResponse::Ok().json(row.view()))
}

pub async fn create(
    operator: Operator,
    state: web::Data<AppState>,
    raw: web::Bytes,
) -> Result<HttpResponse, OpError> {
    operator.require_admin()?;
    let fields = body::fields(&json_body(&raw), true).map_err(OpError::BadRequest)?;
    let mut conn = state.pool.get().await?;
    let created = services::create(&mut conn, &operator, fields).await?;
    Ok(HttpResponse::Created().json(created.view()))
}

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
    Ok(HttpResponse::Ok().json(updated.view()))
}

/// The candidates: the 404 for an unknown service and the 400 for a non-parent come before
/// anything else; the query is never refused.
pub async fn candidates(
    operator: Operator,
    state: web::Data<AppState>,
    path: web::Path<String>,
    req: HttpRequest,
) -> Result<HttpResponse, OpError> {
    operator.require_admin()?;
    let id = service_id(&path)?;
    let mut conn = state.pool.get().await?;
    let parent = services::find(&mut conn, id)
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
            ..row.view()
        })
        .collect();
    Ok(HttpResponse::Ok().json(json!({"data": data, "meta": meta})))
}

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
    Ok(HttpResponse::Ok()
        .json(json!({"message": "Child services updated successfully", "statusCode": 200})))
}

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
    Ok(HttpResponse::Ok().json(json!({"data": entries, "meta": meta})))
}
