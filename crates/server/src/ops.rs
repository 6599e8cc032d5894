//! The operational routes every service serves: `/healthz` (the process answers),
//! `/readyz` (its database answers), `/metrics` (Prometheus text), `/openapi.json` and
//! `/docs` (the service's OpenAPI document and a page for it that loads nothing from the
//! internet).

use std::time::Duration;

use actix_web::http::header::ContentType;
use actix_web::{HttpResponse, guard, web};
use serde::Serialize;
use utoipa::OpenApi;
use utoipa_swagger_ui::{Config, SwaggerUi};

use crate::audience::Audience;

/// How long `/readyz` waits for the database before answering 503.
const READY_TIMEOUT: Duration = Duration::from_secs(3);

/// What the operational routes need from the app.
#[derive(Clone)]
pub struct OpsState {
    pub service: &'static str,
    pub pool: db::Pool,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct Health {
    status: HealthStatus,
    /// Per dependency (`database`): `up` or `down`; absent from `/healthz`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<std::collections::BTreeMap<String, String>>, nullable = false)]
    checks: Option<serde_json::Value>,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum HealthStatus {
    /// `/healthz`: the process answers.
    Ok,
    /// `/readyz`: the database answers.
    Ready,
    /// `/readyz`: the database does not answer.
    Unavailable,
}

/// The process is alive. Never touches the database, so a database outage does not make
/// Kubernetes restart healthy pods.
#[utoipa::path(get, path = "/healthz", responses((status = 200, body = Health, description = "the process is alive")))]
pub async fn get_health() -> HttpResponse {
    HttpResponse::Ok().json(Health {
        status: HealthStatus::Ok,
        checks: None,
    })
}

/// The service can do its work: a database connection answers a query.
#[utoipa::path(get, path = "/readyz", responses(
    (status = 200, body = Health, description = "the database answers"),
    (status = 503, body = Health, description = "the database does not answer"),
))]
pub async fn get_readiness(state: web::Data<OpsState>) -> HttpResponse {
    let outcome = match tokio::time::timeout(READY_TIMEOUT, db::check_ready(&state.pool)).await {
        Ok(result) => result,
        Err(_) => Err(format!("no answer within {READY_TIMEOUT:?}")),
    };
    let counted = if outcome.is_ok() {
        "ready"
    } else {
        "unavailable"
    };
    metrics::counter!(crate::ops_metrics::READINESS_CHECKS, "outcome" => counted).increment(1);
    match outcome {
        Ok(()) => HttpResponse::Ok().json(Health {
            status: HealthStatus::Ready,
            checks: Some(serde_json::json!({"database": "up"})),
        }),
        Err(reason) => {
            tracing::warn!(service = state.service, error.message = %reason, "not ready: the database does not answer");
            HttpResponse::ServiceUnavailable().json(Health {
                status: HealthStatus::Unavailable,
                checks: Some(serde_json::json!({"database": "down"})),
            })
        }
    }
}

/// Prometheus text: request counts and latencies by route and status, pool usage.
#[utoipa::path(get, path = "/metrics", responses(
    (status = 200, content_type = "text/plain", body = String, description = "Prometheus text format"),
))]
pub async fn get_metrics(state: web::Data<OpsState>) -> HttpResponse {
    let status = db::PoolStatus::of(&state.pool);
    let gauge = |state_label: &'static str, value: usize| {
        metrics::gauge!(crate::ops_metrics::DB_POOL_CONNECTIONS, "state" => state_label)
            .set(value as f64);
    };
    gauge("max", status.max_size);
    gauge("open", status.size);
    gauge("in_use", status.in_use());
    gauge("idle", status.available);
    gauge("waiting", status.waiting);
    HttpResponse::Ok()
        .content_type("text/plain; version=0.0.4; charset=utf-8")
        .body(telemetry::metrics::render())
}

/// `GET /docs` (docs/design.md: the page, or a redirect to `/docs/`): the page lives at `/docs/`,
/// where its relative links to its scripts and styles resolve.
pub async fn docs_without_slash() -> HttpResponse {
    HttpResponse::PermanentRedirect()
        .insert_header((actix_web::http::header::LOCATION, "/docs/"))
        .finish()
}

#[derive(OpenApi)]
#[openapi(tags((name = "operations", description = "Probes and metrics for the platform")))]
struct OpsDoc;

/// The operational routes' part of a service's OpenAPI document, for the platform
/// ([`Audience::Operations`]).
pub fn openapi() -> utoipa::openapi::OpenApi {
    operations_document([
        crate::route!(get_health),
        crate::route!(get_readiness),
        crate::route!(get_metrics),
    ])
}

/// The part of a document that `routes`, a service's operational routes, make: tagged
/// "operations", for the platform. (They are registered by [`configure`], not by a list.)
pub fn operations_document(
    routes: impl IntoIterator<Item = crate::Route>,
) -> utoipa::openapi::OpenApi {
    let routes = crate::tagged("operations", routes);
    crate::Routes::new([crate::scope(Audience::Operations, "", routes)]).document(OpsDoc::openapi())
}

/// A service's whole document as the JSON `/openapi.json` serves, written once at start.
///
/// Every actix worker builds its own app; a worker that kept the document itself (what
/// `SwaggerUi::url` does) held a copy of the whole tree (half a megabyte for the order
/// service's) and serialised it again on every request. The bytes are shared by all workers.
#[derive(Clone)]
pub struct Document(web::Bytes);

impl From<utoipa::openapi::OpenApi> for Document {
    /// # Panics
    /// Never in practice: a utoipa document is plain data with text keys, which serde_json
    /// always writes (and it is written at start, which every test of a service meets first).
    #[allow(clippy::expect_used)]
    fn from(openapi: utoipa::openapi::OpenApi) -> Self {
        Self(
            serde_json::to_vec(&openapi)
                .expect("an OpenAPI document serialises")
                .into(),
        )
    }
}

async fn document(document: web::Data<Document>) -> HttpResponse {
    HttpResponse::Ok()
        .content_type(ContentType::json())
        .body(document.0.clone())
}

/// Registers the operational routes and the document (the service's whole document,
/// operational routes included).
/// Resources, not bare routes: another method on these paths is a 405 with `Allow: GET`,
/// as on every other path, not a 404 (found by `make fuzz-api`). `/openapi.json` keeps the
/// GET guard `SwaggerUi` gave it (another method is a 404 there, as before).
pub fn configure(cfg: &mut web::ServiceConfig, openapi: Document) {
    cfg.service(web::resource("/healthz").route(web::get().to(get_health)))
        .service(web::resource("/readyz").route(web::get().to(get_readiness)))
        .service(web::resource("/metrics").route(web::get().to(get_metrics)));
    configure_document(cfg, openapi);
}

/// Registers `/openapi.json` (the document) and `/docs` (its page); also for a process
/// whose probes are its own (the payment sandbox has no database).
pub fn configure_document(cfg: &mut web::ServiceConfig, openapi: Document) {
    cfg.service(web::resource("/docs").route(web::get().to(docs_without_slash)))
        .service(
            web::resource("/openapi.json")
                .guard(guard::Get())
                .app_data(web::Data::new(openapi))
                .to(document),
        )
        .service(SwaggerUi::new("/docs/{_:.*}").config(Config::new(["/openapi.json"])));
}
