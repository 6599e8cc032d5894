//! The children routes: a parent's candidates, and assigning and unassigning them.

use actix_web::{HttpRequest, HttpResponse, web};
use envelope::Refuses;
use serde::Serialize;

use crate::auth::Operator;
use crate::error::OpError;
use crate::hierarchy::assignment;
use crate::hierarchy::children::{self, ChildrenBody, ChildrenRefusal};
use crate::hierarchy::lookup::{self, ServicePath, ServiceRefusal};
use crate::hierarchy::service_schemas::Candidate;
use crate::hierarchy::services::ServiceView;
use crate::query::{ListPage, PageParams, Params};
use crate::state::AppState;

use super::json_body;

/// The children route's answer.
#[derive(Serialize, utoipa::ToSchema)]
pub struct ChildrenUpdated {
    /// Always the same words (the example).
    #[schema(example = json!(ChildrenUpdated::MESSAGE))]
    message: &'static str,
    /// Always 200.
    #[serde(rename = "statusCode")]
    status_code: u16,
}

impl ChildrenUpdated {
    pub const MESSAGE: &'static str = "Child services updated successfully";

    const ANSWER: ChildrenUpdated = ChildrenUpdated {
        message: Self::MESSAGE,
        status_code: 200,
    };

    /// The answer as the document shows it.
    fn shown() -> String {
        format!(
            r#"`{{"message": "{}", "statusCode": {}}}`"#,
            Self::ANSWER.message,
            Self::ANSWER.status_code
        )
    }
}

/// The candidates' filters, as the document shows them (the handler reads the raw query).
#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)]
pub struct CandidateFilters {
    /// Case-insensitive match on `title` and `titleTranslated`; wins over `search`.
    name: Option<String>,
    /// The same as `name`, used when `name` is absent.
    search: Option<String>,
    /// Exact match (`active` or `hidden`).
    status: Option<String>,
}

/// The children candidates of a parent
///
/// The rows that may be this parent's children: role `child` and unassigned or already this
/// parent's (a child of another parent is absent, not marked), by `ordering`, then id. The
/// query is never refused. Roles: admin, super_admin. Checks: token, role, path id, the
/// service exists (404), the service is a parent (400), before the query is read.
#[utoipa::path(get, path = "/services/{id}/children",
    params(ServicePath, CandidateFilters, PageParams),
    responses(Refuses<(ServiceRefusal, ChildrenRefusal)>,
        children::CandidatesBadRequest,
        (status = 200, description = "`{data: [candidates with isSelected], meta}`", body = ListPage<Candidate>)))]
pub async fn list_child_candidates(
    operator: Operator,
    state: web::Data<AppState>,
    path: web::Path<ServicePath>,
    req: HttpRequest,
) -> Result<HttpResponse, OpError> {
    operator.require_admin()?;
    let id = path.id()?;
    let mut conn = state.pool.get().await?;
    assignment::require_parent(&lookup::find(&mut conn, id).await?)?;
    let params = Params::parse(req.query_string());
    let search = params
        .get("name")
        .or_else(|| params.get("search"))
        .map(str::trim)
        .filter(|s| !s.is_empty());
    let page = params.page();
    let (rows, meta) =
        assignment::candidates(&mut conn, id, search, params.get("status"), &page).await?;
    let data: Vec<_> = rows
        .iter()
        .map(|row| ServiceView {
            is_selected: Some(row.parent_id == Some(id)),
            ..ServiceView::from(row)
        })
        .collect();
    Ok(HttpResponse::Ok().json(ListPage { data, meta }))
}

/// Assign and unassign children
///
/// All checks run before the write and one failure rejects the whole call (nothing is
/// written), in this order: token (401), role (403), path id (400), body types (400), then
/// the spec's six checks: 1 both arrays empty (400), 2 an id in both arrays (400), 3 the path
/// id in either array (400), 4 the path service does not exist (404), 5 it is not a `parent`
/// (400), 6 an assign id does not exist, is not a `child` or belongs to another parent (400,
/// the failing ids in the order sent). Checks 1 to 3 run before the parent is read.
/// Assigning a child already this parent's is a no-op; unassign ids that are not this
/// parent's children are ignored. One transaction locks the parent, then the services to
/// assign in id order; recorded in the audit trail. Roles: admin, super_admin.
#[utoipa::path(patch, path = "/services/{id}/children",
    params(ServicePath), request_body = ChildrenBody,
    responses(Refuses<(ServiceRefusal, ChildrenRefusal)>,
        children::SetChildrenBadRequest,
        (status = 200, description = &ChildrenUpdated::shown(), body = ChildrenUpdated)))]
pub async fn update_children(
    operator: Operator,
    state: web::Data<AppState>,
    path: web::Path<ServicePath>,
    raw: web::Bytes,
) -> Result<HttpResponse, OpError> {
    operator.require_admin()?;
    let id = path.id()?;
    let (assign, unassign) = children::read(&json_body(&raw), id)?;
    let mut conn = state.pool.get().await?;
    assignment::set_children(&mut conn, &operator, id, &assign, &unassign).await?;
    tracing::info!(
        operator.id = %operator.id,
        service.id = id,
        assigned = ?assign,
        unassigned = ?unassign,
        "children updated"
    );
    Ok(HttpResponse::Ok().json(ChildrenUpdated::ANSWER))
}
