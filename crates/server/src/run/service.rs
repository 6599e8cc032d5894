//! A service on the shared server: its app, routes and document ([`ServiceApp`]), served
//! with its own data ([`serve`]).

use std::net::TcpListener;
use std::time::Duration;

use actix_web::dev::Server;

use super::start;
use crate::AppSettings;
use crate::config::CommonConfig;

/// Why a service could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error(transparent)]
    Pool(#[from] db::BuildError),
    #[error("cannot start the HTTP server: {0}")]
    Http(#[from] std::io::Error),
}

/// What a service adds to the shared app: its name, its envelope, its route list and the
/// document built from it.
pub struct ServiceApp {
    pub name: &'static str,
    pub envelope: envelope::Envelope,
    pub routes: &'static crate::Routes,
    pub openapi: utoipa::openapi::OpenApi,
}

impl ServiceApp {
    /// The service `name` answering in `envelope`, its `routes`, and its document: `base`
    /// (title, description, tags, security schemes) with the routes' operations
    /// ([`crate::Routes::openapi`]).
    pub fn new(
        name: &'static str,
        envelope: envelope::Envelope,
        routes: &'static crate::Routes,
        base: utoipa::openapi::OpenApi,
    ) -> Self {
        Self {
            name,
            envelope,
            routes,
            openapi: routes.openapi(base, envelope),
        }
    }
}

/// A service's server: the shared app ([`crate::app`]) with `service`'s routes and the data
/// `data` registers (called once per worker), on `listener`, with `pool` behind `/readyz`.
pub fn serve<F>(
    listener: TcpListener,
    common: &CommonConfig,
    pool: db::Pool,
    service: ServiceApp,
    data: F,
) -> Result<Server, StartError>
where
    F: Fn(&mut actix_web::web::ServiceConfig) + Clone + Send + 'static,
{
    crate::ops_metrics::register();
    let settings = AppSettings::new(
        service.name,
        service.envelope,
        common,
        pool,
        service.openapi,
    );
    let routes = service.routes;
    Ok(start(listener, common.workers, settings, move |cfg| {
        data(cfg);
        routes.configure(cfg);
    })?)
}

/// An outbound HTTP client (`telemetry::client::http_client`) built at start, where a
/// failure stops the service.
pub fn http_client(
    timeout: Duration,
    idle: Duration,
) -> Result<telemetry::client::HttpClient, StartError> {
    telemetry::client::http_client(timeout, idle)
        .map_err(|e| StartError::Http(std::io::Error::other(e)))
}
