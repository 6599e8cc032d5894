//! The app every service starts from: operational routes, error handlers in the service's
//! envelope, and the middleware stack (outermost first): tracing root span, `X-Request-Id`,
//! request metrics, exposure of internals, JSON for every error actix makes itself, NUL
//! characters refused.

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceFactory, ServiceRequest, ServiceResponse};
use actix_web::middleware::from_fn;
use actix_web::{App, Error, web};
use envelope::{Envelope, exposure, handlers};

use crate::ops::{self, OpsState};

/// What the shared part of the app needs; each service adds its own routes and data.
#[derive(Clone)]
pub struct AppSettings {
    pub service: &'static str,
    pub envelope: Envelope,
    pub show_internals: bool,
    pub pool: db::Pool,
    pub openapi: utoipa::openapi::OpenApi,
}

impl AppSettings {
    pub fn new(
        service: &'static str,
        envelope: Envelope,
        common: &crate::CommonConfig,
        pool: db::Pool,
        openapi: utoipa::openapi::OpenApi,
    ) -> Self {
        Self {
            service,
            envelope,
            show_internals: common.app_env.shows_internals(),
            pool,
            openapi,
        }
    }
}

pub fn app(
    settings: AppSettings,
) -> App<
    impl ServiceFactory<
        ServiceRequest,
        Config = (),
        Response = ServiceResponse<impl MessageBody>,
        Error = Error,
        InitError = (),
    >,
> {
    // Install the recorder before the first request, or its metrics go nowhere.
    telemetry::metrics::handle();
    let envelope = settings.envelope;
    let openapi = settings.openapi.clone();
    App::new()
        .app_data(web::Data::new(envelope))
        .app_data(web::Data::new(OpsState {
            service: settings.service,
            pool: settings.pool.clone(),
        }))
        .app_data(handlers::json_config(envelope))
        .app_data(handlers::payload_config())
        .app_data(handlers::path_config(envelope))
        .app_data(handlers::query_config(envelope))
        .configure(move |cfg| ops::configure(cfg, openapi))
        .default_service(web::to(handlers::not_found))
        .wrap(from_fn(envelope::nul::middleware(envelope)))
        .wrap(handlers::plain_errors_to_json(envelope))
        .wrap(from_fn(exposure::middleware(settings.show_internals)))
        .wrap(from_fn(telemetry::http::record_metrics))
        .wrap(from_fn(telemetry::http::request_id_header))
        .wrap(telemetry::http::tracing_logger())
}
