//! The service's one route table and its OpenAPI document.

use actix_web::web;
use utoipa::OpenApi;

use crate::handlers;

#[derive(OpenApi)]
#[openapi(info(
    title = "operator-service",
    description = "Services and their parent/child hierarchy for the admin panel, under /api/v1/operator. \
                   Bearer operator JWT (HS256, {sub, role, exp}); errors are {statusCode, message, error}: 401 \
                   Unauthorized, 403 Forbidden resource. Routes: GET /services?page&limit&search|name&status&hierarchy_role \
                   ({data, meta: {totalItems, page, itemsPerPage, totalPages}}; all five roles), \
                   GET /services/all/without-pagination (bare array without hierarchyRole/parentId; all roles), \
                   GET /services/{id} (all roles), POST /services and PATCH /services/{id} (admin, super_admin; unknown \
                   keys 400 `property <key> should not exist`, parentId stripped), GET /services/{id}/children \
                   ?page&limit&name|search&status (candidates with isSelected; admin, super_admin), PATCH /services/{id}/children \
                   {assignServiceIds, unassignServiceIds} (the six checks in order; admin, super_admin), GET /audit (admin, super_admin)."
))]
struct ApiDoc;

pub fn openapi() -> utoipa::openapi::OpenApi {
    ApiDoc::openapi().merge_from(server::ops::openapi())
}

/// `/services/all/without-pagination` comes before `/services/{id}`.
pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(
        web::resource("/api/v1/operator/services")
            .route(web::get().to(handlers::list))
            .route(web::post().to(handlers::create)),
    )
    .service(
        web::resource("/api/v1/operator/services/all/without-pagination")
            .route(web::get().to(handlers::all)),
    )
    .service(
        web::resource("/api/v1/operator/services/{id}")
            .route(web::get().to(handlers::detail))
            .route(web::patch().to(handlers::update)),
    )
    .service(
        web::resource("/api/v1/operator/services/{id}/children")
            .route(web::get().to(handlers::candidates))
            .route(web::patch().to(handlers::set_children)),
    )
    .service(web::resource("/api/v1/operator/audit").route(web::get().to(handlers::audit)));
}
