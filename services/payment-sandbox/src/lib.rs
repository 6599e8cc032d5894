//! The payment sandbox: plays the payment service of docs/design.md for development and tests,
//! never in production. Card ids decide what happens:
//!
//! | card id starts with | `POST /v1/payments` answers | then |
//! |---|---|---|
//! | `decline` | 200 `{id, status: "declined"}` | `payment_declined` webhook |
//! | `fail4xx` | 402 with an error body | nothing |
//! | `fail5xx` | 500 | nothing |
//! | anything else | 200 `{id, status: "pending", redirect_url}` | the 3-D Secure page's buttons send the webhook, or at once with `SANDBOX_AUTO_CAPTURE=true` |
//!
//! Payment sessions have no card: they always wait on the 3-D Secure page (or auto-capture).
//! State lives in this process's memory: the sandbox runs as one replica and forgets
//! everything on restart, which is what a throwaway dev tool should do.

pub mod config;
pub mod pages;
pub mod payments;
pub mod routes;
pub mod webhook;

/// The binary's name, used in logs, traces and metrics.
pub const SERVICE: &str = "payment-sandbox";
/// `BIND_ADDR`'s default port.
pub const DEFAULT_PORT: u16 = 8085;

use std::net::TcpListener;

use actix_web::{App, web};

/// The sandbox's HTTP server on `listener`.
pub fn build(
    config: config::Config,
    listener: TcpListener,
) -> Result<actix_web::dev::Server, String> {
    let webhook = webhook::Webhook::new(config.webhook_url.clone(), config.webhook_secret.clone())
        .map_err(|e| format!("cannot build the HTTP client: {e}"))?;
    let sandbox = web::Data::new(routes::Sandbox {
        store: payments::Store::default(),
        webhook,
        auto_capture: config.auto_capture,
        public_url: config.public_url.clone(),
    });
    telemetry::metrics::handle();
    server::http_server_with(
        listener,
        config.common.workers,
        config.common.http,
        move || {
            App::new()
                .app_data(sandbox.clone())
                .configure(routes::configure)
                .wrap(telemetry::http::observe())
        },
    )
    .map_err(|e| format!("cannot start the HTTP server: {e}"))
}
