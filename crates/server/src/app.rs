//! The app every service starts from: operational routes, error handlers in the service's
//! envelope, and the middleware stack (outermost first): `Connection: close` on every answer
//! once the process is stopping (`crate::stopping`), the request's span, `X-Request-Id`
//! and metrics (`telemetry::http`), exposure of internals, JSON for every error actix makes itself, the
//! body's limits (read deadline, size, NUL characters, JSON depth: `envelope::body_limits`).

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceFactory, ServiceRequest, ServiceResponse};
use actix_web::middleware::from_fn;
use actix_web::{App, Error, web};
use envelope::{Envelope, error_handlers, exposure};

use crate::ops::{self, OpsState};

/// What the shared part of the app needs; each service adds its own routes and data.
#[derive(Clone)]
pub struct AppSettings {
    pub service: &'static str,
    pub envelope: Envelope,
    pub show_internals: bool,
    pub pool: db::Pool,
    pub openapi: crate::ops::Document,
    /// The `HTTP_*` limits: the app uses the body's read deadline, [`crate::start`] the rest.
    pub http: crate::HttpLimits,
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
            openapi: openapi.into(),
            http: common.http,
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
        .app_data(error_handlers::json_config(envelope))
        .app_data(error_handlers::payload_config())
        .app_data(error_handlers::path_config(envelope))
        .app_data(error_handlers::query_config(envelope))
        .configure(move |cfg| ops::configure(cfg, openapi))
        .default_service(web::to(error_handlers::not_found))
        .wrap(from_fn(envelope::body_limits::middleware(
            envelope,
            settings.http.body_timeout,
        )))
        .wrap(error_handlers::plain_errors_to_json(envelope))
        .wrap(from_fn(exposure::middleware(settings.show_internals)))
        .wrap(telemetry::http::observe())
        .wrap(crate::stopping::CloseConnections)
}
