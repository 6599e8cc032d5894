//! The audit trail route.

use actix_web::{HttpRequest, HttpResponse, web};

use crate::auth::Operator;
use crate::error::OpError;
use crate::hierarchy::audit::{self, Entry};
use crate::query::{ListPage, PageParams, Params};
use crate::state::AppState;

/// The audit trail
///
/// Every write (create, change, children), newest first. Roles: admin, super_admin.
#[utoipa::path(get, path = "/audit",
    params(PageParams),
    responses((status = 200, description = "`{data: [entries], meta}`", body = ListPage<Entry>)))]
pub async fn list_audit_entries(
    operator: Operator,
    state: web::Data<AppState>,
    req: HttpRequest,
) -> Result<HttpResponse, OpError> {
    operator.require_admin()?;
    let page = Params::parse(req.query_string()).page();
    let mut conn = state.pool.get().await?;
    let (entries, meta) = audit::list(&mut conn, &page).await?;
    Ok(HttpResponse::Ok().json(ListPage {
        data: entries,
        meta,
    }))
}
