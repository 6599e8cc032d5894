//! The payment sandbox: plays the payment service of docs/design.md for development and tests,
//! never in production. Card ids decide what happens:
//!
//! - `decline…`: `POST /v1/payments` answers 200 `{id, status: "declined", redirect_url:
//!   null}`; the payment is declined at once; webhook `payment_declined`.
//! - `fail4xx…`: 402 `{"error": {"code": "card_declined", …}}`; no payment, no webhook.
//! - `fail5xx…`: 500 `{"error": {"code": "gateway_error", …}}`; no payment, no webhook.
//! - `silent…`: 200 `{id, status: "pending", redirect_url}`, like any 3-D Secure payment; the
//!   payment is captured at once; its webhook is never sent (a lost webhook).
//! - `lost…`: 502 `{"error": {"code": "answer_lost", …}}`: the caller never learns the id; the
//!   payment is captured at once; no webhook ever: find it by its reference.
//! - `latelost<N>…` and `latedecline<N>…` (N: 1 to 600 seconds, e.g. `latelost12-soak`): a
//!   slow gateway whose answer is lost and which commits the payment after the caller's first
//!   look. The call is held N seconds (set N past the caller's wait, so that it times out)
//!   and answered 502 `answer_lost`. The payment, captured (`latelost`) or declined
//!   (`latedecline`), with no webhook ever, is made once N seconds have passed and its
//!   reference has been read back (`GET /v1/payments?reference=`) since the call: that read
//!   found nothing, and only a later one finds it. With no such read it is made ten minutes
//!   after the call. Before that, no read-back route knows of it (not by id, not by
//!   reference, not in a settlement). It is made by a task of its own, so a caller that hung
//!   up changes nothing. A late card id without a hold of 1 to 600 s is refused with 422.
//! - anything else: 200 `{id, status: "pending", redirect_url}`; the payment is pending on its
//!   3-D Secure page, whose buttons capture or decline it (captured at once with
//!   `SANDBOX_AUTO_CAPTURE=true`); webhook `payment_captured` or `payment_declined`.
//!
//! Payment sessions have no card: they always wait on the 3-D Secure page (or auto-capture).
//! A capture or decline moves the payment's status (and `updated_at`, and `captured_at`) when
//! it happens; the webhook goes out after, and its delivery failing leaves the payment as it
//! is, so the read-back routes (`GET /v1/payments/{id}`, `GET /v1/payments?reference=…`,
//! `GET /v1/settlements/{date}`) answer the gateway's truth. A session's webhook names its
//! `ses_…` id as the `payment_id`, and the read-back routes answer sessions too.
//! State lives in this process's memory: the sandbox runs as one replica and forgets
//! everything on restart, which is what a throwaway dev tool should do.

pub mod answers;
pub mod clock;
pub mod config;
pub mod error;
pub mod gateway;
pub mod handlers;
pub mod ops;
pub mod pages;
pub mod payments;
pub mod routes;
pub mod settlements;
pub mod store;
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
    let sender = webhook::Sender::new(
        config.webhook_url.clone(),
        config.webhook_secret.clone(),
        config.common.http.caller_idle,
    )
    .map_err(|e| format!("cannot build the HTTP client: {e}"))?;
    let gateway = web::Data::new(gateway::Gateway::new(
        sender,
        config.auto_capture,
        config.public_url.clone(),
        config.clock.clone(),
        config.settlement_page_size,
    ));
    let document = server::ops::Document::from(routes::openapi());
    telemetry::metrics::handle();
    telemetry::closed_connections::expect_calls_to(&config.webhook_url);
    server::http_server_with(
        listener,
        config.common.workers,
        config.common.http,
        move || {
            let document = document.clone();
            App::new()
                .app_data(gateway.clone())
                .app_data(error::query_config())
                .app_data(error::path_config())
                .configure(move |cfg| routes::configure(cfg, document))
                .default_service(web::to(error::unknown_path))
                .wrap(error::wrong_method_to_json())
                .wrap(telemetry::http::observe())
                // As the services' own app does: every answer after SIGTERM closes its
                // connection (`server::stopping`).
                .wrap(server::CloseConnections)
        },
    )
    .map_err(|e| format!("cannot start the HTTP server: {e}"))
}
