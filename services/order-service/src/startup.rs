//! Builds the HTTP server from a `Config` and a bound listener (tests bind port 0).

use std::net::TcpListener;

use actix_web::dev::Server;
use actix_web::web;
use envelope::Envelope;
use server::caller::CallerLookup;
use server::{AppSettings, StartError};

use crate::config::Config;
use crate::nearest::BranchIndexes;
use crate::state::{AppState, Credit, Relay};
use crate::{SERVICE, catalog, routes};

pub fn build(config: Config, listener: TcpListener) -> Result<Server, StartError> {
    let pool = db::build_pool(&config.database.pool_settings())?;
    let client = |timeout| {
        telemetry::client::http_client(timeout)
            .map_err(|e| StartError::Http(std::io::Error::other(e)))
    };
    // One pooled client for the relay; each call sets its own timeout (10 s or 20 s).
    let relay_http = client(config.pay_timeout.max(config.relay_timeout))?;
    let short = client(std::time::Duration::from_secs(10))?;
    let state = web::Data::new(AppState {
        pool: pool.clone(),
        relay: Relay {
            base: config.point_service_url.clone(),
            http: relay_http,
            timeout: config.relay_timeout,
            pay_timeout: config.pay_timeout,
        },
        caller: CallerLookup::new(config.auth_service_url.clone(), short.clone()),
        credit: Credit {
            target: config.credit.clone(),
            point_service: config.point_service_url.clone(),
            internal_token: config.internal_token.clone(),
            http: short,
        },
        children: catalog::children_cache(),
        branches: BranchIndexes::new(config.nearest_cache_ttl),
        tries_per_client: config.tries_per_client,
        tries_per_ip: config.tries_per_ip,
        trust_forwarded_for: config.trust_forwarded_for,
    });
    let settings = AppSettings::new(
        SERVICE,
        Envelope::C,
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
