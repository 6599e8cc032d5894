//! The operational routes as every service serves them (`server::ops`): `/healthz`,
//! `/readyz`, `/metrics`, `/openapi.json` and `/docs` (the page loads nothing from the
//! internet). The sandbox has no database, so its probes are its own: alive is ready.

use actix_web::{HttpResponse, web};
use utoipa::OpenApi;

use crate::answers::Health;

/// The process is alive.
#[utoipa::path(get, path = "/healthz", tag = "operations",
    responses((status = 200, body = Health, description = "alive")))]
pub async fn healthz() -> web::Json<Health> {
    web::Json(Health { status: "ok" })
}

/// The sandbox depends on nothing, so alive is ready.
#[utoipa::path(get, path = "/readyz", tag = "operations",
    responses((status = 200, body = Health, description = "ready")))]
pub async fn readyz() -> web::Json<Health> {
    web::Json(Health { status: "ok" })
}

/// Prometheus text
///
/// Request counts and latencies by route and status, in Prometheus text format.
#[utoipa::path(get, path = "/metrics", tag = "operations",
    responses((status = 200, body = String, description = "the metrics")))]
pub async fn metrics() -> HttpResponse {
    HttpResponse::Ok()
        .content_type("text/plain; version=0.0.4; charset=utf-8")
        .body(telemetry::metrics::render())
}

#[derive(OpenApi)]
#[openapi(
    paths(healthz, readyz, metrics),
    tags((name = "operations", description = "Probes and metrics for the platform"))
)]
struct OpsDoc;

/// The operational routes' part of the document.
pub fn openapi() -> utoipa::openapi::OpenApi {
    OpsDoc::openapi()
}

/// Registers the probes and metrics, then the document and its page as every service
/// serves them (`server::ops::configure_document`).
pub fn configure(cfg: &mut web::ServiceConfig, openapi: server::ops::Document) {
    cfg.service(web::resource("/healthz").route(web::get().to(healthz)))
        .service(web::resource("/readyz").route(web::get().to(readyz)))
        .service(web::resource("/metrics").route(web::get().to(metrics)));
    server::ops::configure_document(cfg, openapi);
}
