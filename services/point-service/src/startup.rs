//! Builds the HTTP server from a `Config` and a bound listener (tests bind port 0).

use std::net::TcpListener;

use actix_web::dev::Server;
use actix_web::web;
use envelope::Envelope;
use server::{AppSettings, StartError};

use crate::clients::auth::AuthClient;
use crate::clients::payments::PaymentClient;
use crate::config::Config;
use crate::state::AppState;
use crate::{SERVICE, routes};

pub fn build(config: Config, listener: TcpListener) -> Result<Server, StartError> {
    let pool = db::build_pool(&config.database.pool_settings())?;
    let client = |timeout| {
        telemetry::client::http_client(timeout)
            .map_err(|e| StartError::Http(std::io::Error::other(e)))
    };
    let state = web::Data::new(AppState {
        pool: pool.clone(),
        auth: AuthClient::new(
            config.auth_service_url.clone(),
            client(config.auth_timeout)?,
            config.internal_token.clone(),
            config.caller_cache_ttl,
        ),
        payments: PaymentClient::new(
            config.payment_service_url.clone(),
            client(config.payment_timeout)?,
        ),
        flags: config.flags,
        internal_token: config.internal_token.clone(),
        webhook_secret: config.webhook_secret.clone(),
    });
    let settings = AppSettings::new(
        SERVICE,
        Envelope::B,
        &config.common,
        pool,
        routes::openapi(),
    );
    Ok(server::start(
        listener,
        config.common.workers,
        settings,
        move |cfg| {
            cfg.app_data(state.clone());
            routes::configure(cfg);
        },
    )?)
}
