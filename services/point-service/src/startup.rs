//! Builds the HTTP server from a `Config` and a bound listener (tests bind port 0), and
//! starts beside it the payment sync's worker (it stops on the server's shutdown signals) and
//! the point orders' batchers (they stop once the server and its workers have dropped their
//! state, every batch answered).

use std::net::TcpListener;
use std::time::Duration;

use actix_web::dev::Server;
use actix_web::web;
use server::StartError;

use crate::clients::auth::AuthClient;
use crate::config::Config;
use crate::payments::client::PaymentClient;
use crate::routes;
use crate::state::AppState;

/// The CloudEvents `source` of this service's events.
pub const EVENTS_SOURCE: &str = "/loyalty/point-service";

pub fn build(config: Config, listener: TcpListener) -> Result<Server, StartError> {
    let pool = db::build_pool(&config.database.pool_settings())?;
    crate::metric_families::describe();
    crate::payments::webhook::export_counters();
    crate::payments::sync::export_counters();
    crate::payments::client::export_counters();
    crate::back_office::export_counters();
    config
        .auth_service_url
        .iter()
        .for_each(|url| telemetry::closed_connections::expect_calls_to(url));
    let idle = config.common.http.caller_idle;
    let client = |wait| server::http_client(wait, idle);
    let state = AppState {
        pool: pool.clone(),
        auth: AuthClient::new(
            config.auth_service_url.clone(),
            client(config.auth_timeout)?,
            config.signer.clone(),
            config.caller_cache_ttl,
        ),
        payments: PaymentClient::new(
            config.payment_service_url.clone(),
            client(config.payment_timeout)?,
        ),
        flags: config.flags,
        identity: config.identity.clone(),
        webhook_secret: config.webhook_secret.clone(),
        attempt_window: crate::payments::attempts::in_flight_window(config.payment_timeout),
        limits: config.limits,
        sync: config.sync,
        offer_max_points_per_sar: config.offer_max_points_per_sar.clone(),
        // On the main runtime, shared by every worker: a payer's orders meet in one batcher.
        batcher: crate::orders::Batcher::start(pool.clone(), config.batches),
    };
    // The worker runs on the main runtime with a client of its own (see
    // `with_worker_clients` on why clients are not shared across runtimes).
    let worker = crate::payments::sync::task::Worker {
        pool: pool.clone(),
        payments: state.payments.with_http(client(config.payment_timeout)?),
        settings: config.sync,
        window: state.attempt_window,
        holder: db::leases::holder(config.hostname.as_deref(), &config.common.bind_addr),
    };
    let holder = worker.holder.clone();
    tokio::spawn(crate::payments::sync::task::run(
        worker,
        server::shutdown_watch(),
    ));
    // The events' publisher and the outbox's gauges, on the main runtime too (`outbox`).
    outbox::start(pool.clone(), config.events.clone(), holder, EVENTS_SOURCE);
    // The last housekeeping run of each table, as gauges (the CronJob is not scraped).
    housekeeping::gauges::spawn(
        pool.clone(),
        crate::housekeeping::RULES,
        server::shutdown_watch(),
    );
    let waits = (config.auth_timeout, config.payment_timeout, idle);
    let door = back_office::keeper::Door::new(
        config.identity.clone(),
        service_identity::InternalRoute::PointBackOffice,
    );
    server::serve(listener, &config.common, pool, routes::app(), move |cfg| {
        let worker = with_worker_clients(&state, waits);
        // What `server::caller::Caller` resolves a route's caller with.
        cfg.app_data(web::Data::new(worker.auth.lookup().clone()));
        cfg.app_data(web::Data::new(worker));
        // What the back office's routes check their caller with (`back_office::keeper`).
        cfg.app_data(web::Data::new(door.clone()));
    })
}

/// The state with HTTP clients of the calling worker's own (`telemetry::client::http_client`
/// says why); the pool and the caller cache stay shared. Building a client cannot fail once
/// the first ones were built at start; if it did, the worker keeps the shared ones.
fn with_worker_clients(
    shared: &AppState,
    (auth_wait, payment_wait, idle): (Duration, Duration, Duration),
) -> AppState {
    let mut state = shared.clone();
    let client = |wait| telemetry::client::http_client(wait, idle);
    match (client(auth_wait), client(payment_wait)) {
        (Ok(auth), Ok(payments)) => {
            state.auth = state.auth.with_http(auth);
            state.payments = state.payments.with_http(payments);
        }
        (Err(e), _) | (_, Err(e)) => {
            tracing::warn!(error.message = %e, "worker keeps the shared HTTP clients");
        }
    }
    state
}
