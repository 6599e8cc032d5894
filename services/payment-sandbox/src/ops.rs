//! The operational routes as every service serves them (`server::ops`): `/healthz`,
//! `/readyz`, `/metrics`, `/openapi.json` and `/docs` (the page loads nothing from the
//! internet). The sandbox has no database, so its probes are its own: alive is ready.

use actix_web::{HttpResponse, web};

use crate::answers::Health;

/// The process is alive.
#[utoipa::path(get, path = "/healthz",
    responses((status = 200, body = Health)))]
pub async fn get_health() -> web::Json<Health> {
    web::Json(Health { status: "ok" })
}

/// The sandbox depends on nothing, so alive is ready.
#[utoipa::path(get, path = "/readyz",
    responses((status = 200, body = Health)))]
pub async fn get_readiness() -> web::Json<Health> {
    web::Json(Health { status: "ok" })
}

/// Prometheus text
///
/// Request counts and latencies by route and status, in Prometheus text format.
#[utoipa::path(get, path = "/metrics",
    responses((status = 200, body = String, description = "the metrics")))]
pub async fn get_metrics() -> HttpResponse {
    HttpResponse::Ok()
        .content_type("text/plain; version=0.0.4; charset=utf-8")
        .body(telemetry::metrics::render())
}

/// The operational routes' part of the document.
pub fn openapi() -> utoipa::openapi::OpenApi {
    server::ops::operations_document([
        server::route!(get_health),
        server::route!(get_readiness),
        server::route!(get_metrics),
    ])
}

/// Registers the probes and metrics, then the document and its page as every service
/// serves them (`server::ops::configure_document`).
pub fn configure(cfg: &mut web::ServiceConfig, openapi: server::ops::Document) {
    cfg.service(web::resource("/healthz").route(web::get().to(get_health)))
        .service(web::resource("/readyz").route(web::get().to(get_readiness)))
        .service(web::resource("/metrics").route(web::get().to(get_metrics)));
    server::ops::configure_document(cfg, openapi);
}
