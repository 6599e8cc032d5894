//! Builds the HTTP server from a `Config` and a bound listener (tests bind port 0).

use std::net::TcpListener;

use actix_web::dev::Server;
use actix_web::web;
use server::StartError;

use crate::auth::OperatorKeys;
use crate::back_office::upstream::Upstream;
use crate::config::Config;
use crate::routes;
use crate::state::AppState;

pub fn build(config: Config, listener: TcpListener) -> Result<Server, StartError> {
    let pool = db::build_pool(&config.database.pool_settings())?;
    (config.point_service_url.iter())
        .chain(&config.order_service_url)
        .for_each(|url| telemetry::closed_connections::expect_calls_to(url));
    let state = AppState {
        pool: pool.clone(),
        point_service: Upstream {
            keeper: back_office::routes::Keeper::PointService,
            url: config.point_service_url.clone(),
            signer: config.signer.clone(),
            http: None,
            idle: config.common.http.caller_idle,
            wait: config.keeper_wait,
        },
        order_service: Upstream {
            keeper: back_office::routes::Keeper::OrderService,
            url: config.order_service_url.clone(),
            signer: config.signer.clone(),
            http: None,
            idle: config.common.http.caller_idle,
            wait: config.keeper_wait,
        },
    };
    let keys = web::Data::new(OperatorKeys::new(config.jwt_secret.expose().as_bytes()));
    server::serve(listener, &config.common, pool, routes::app(), move |cfg| {
        let mut worker = state.clone();
        worker.point_service = state.point_service.for_worker();
        worker.order_service = state.order_service.for_worker();
        cfg.app_data(web::Data::new(worker)).app_data(keys.clone());
    })
}
