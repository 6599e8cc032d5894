//! Builds the HTTP server from a `Config` and a bound listener (tests bind port 0), and
//! starts the gift-card retry task beside it (it stops on the server's shutdown signals).

use std::net::TcpListener;
use std::time::Duration;

use actix_web::dev::Server;
use actix_web::web;
use server::StartError;
use server::caller::CallerLookup;

use crate::config::Config;
use crate::nearest::BranchIndexes;
use crate::relay::Upstream;
use crate::state::{AppState, Credit, Relay};
use crate::{gift_cards, routes, system_categories};

/// The CloudEvents `source` of this service's events.
pub const EVENTS_SOURCE: &str = "/loyalty/order-service";

pub fn build(config: Config, listener: TcpListener) -> Result<Server, StartError> {
    let pool = db::build_pool(&config.database.pool_settings())?;
    crate::metric_families::describe();
    std::iter::once(&config.point_service_url)
        .chain(&config.auth_service_url)
        .for_each(|url| telemetry::closed_connections::expect_calls_to(url));
    let idle = config.common.http.caller_idle;
    let client = |wait| server::http_client(wait, idle);
    // The relay's client; each call has its own deadline (10 s or 20 s), connecting at most
    // 3 s of it, like the other clients.
    let relay_wait = config.relay_timeout.min(config.pay_timeout);
    let upstream = Upstream::new(&config.point_service_url, relay_wait.min(CONNECT), idle)
        .map_err(|e| StartError::Http(std::io::Error::other(e)))?;
    let short = client(SHORT_CALLS)?;
    let state = AppState {
        pool: pool.clone(),
        relay: Relay {
            upstream,
            timeout: config.relay_timeout,
            pay_timeout: config.pay_timeout,
        },
        caller: CallerLookup::new(config.auth_service_url.clone(), short.clone()),
        credit: Credit {
            target: config.credit.target,
            legacy_url: config.credit.legacy_url.clone(),
            point_service: config.point_service_url.clone(),
            signer: config.signer.clone(),
            http: short,
        },
        children: system_categories::children_cache(),
        branches: BranchIndexes::new(config.nearest_cache_ttl),
        tries_per_client: config.tries_per_client,
        tries_per_ip: config.tries_per_ip,
        trust_forwarded_for: config.trust_forwarded_for,
        gift_card_retry: config.gift_card_retry,
    };
    // The retry task runs on the main runtime with a client of its own (see
    // `with_worker_clients` on why clients are not shared across runtimes).
    let retry_credit = Credit {
        http: client(SHORT_CALLS)?,
        ..state.credit.clone()
    };
    tokio::spawn(gift_cards::retry::run(
        pool.clone(),
        retry_credit,
        config.gift_card_retry,
        server::shutdown_watch(),
    ));
    // The events' publisher and the outbox's gauges, on the main runtime too (`outbox`).
    let holder = db::leases::holder(config.hostname.as_deref(), &config.common.bind_addr);
    outbox::start(pool.clone(), config.events.clone(), holder, EVENTS_SOURCE);
    // The last housekeeping run of each table, as gauges (the CronJob is not scraped).
    housekeeping::gauges::spawn(
        pool.clone(),
        crate::housekeeping::RULES,
        server::shutdown_watch(),
    );
    let door = back_office::keeper::Door::new(
        config.identity.clone(),
        service_identity::InternalRoute::OrderBackOffice,
    );
    server::serve(listener, &config.common, pool, routes::app(), move |cfg| {
        let worker = with_worker_clients(&state, idle);
        // What `server::caller::Caller` resolves the gift-card route's caller with.
        cfg.app_data(web::Data::new(worker.caller.clone()));
        cfg.app_data(web::Data::new(worker));
        // What the back office's routes check their caller with (`back_office::keeper`).
        cfg.app_data(web::Data::new(door.clone()));
    })
}

/// The caller lookup's and the credit call's wait (`GIFT_CARD_CREDIT_LEASE_SECONDS` is at
/// least 15 so that a credit call always ends inside its lease).
const SHORT_CALLS: Duration = Duration::from_secs(10);
/// The relay's longest wait for a connection to the point service.
const CONNECT: Duration = Duration::from_secs(3);

/// The state with HTTP clients of the calling worker's own (`telemetry::client::http_client`
/// says why); the pool and the caches stay shared. Building a client cannot fail once the
/// first ones were built at start; if it did, the worker keeps the shared ones.
fn with_worker_clients(shared: &AppState, idle: Duration) -> AppState {
    let mut state = shared.clone();
    state.relay.upstream = shared.relay.upstream.for_worker();
    match telemetry::client::http_client(SHORT_CALLS, idle) {
        Ok(short) => {
            state.caller = state.caller.with_http(short.clone());
            state.credit.http = short;
        }
        Err(e) => {
            tracing::warn!(error.message = %e, "worker keeps the shared HTTP clients");
        }
    }
    state
}
