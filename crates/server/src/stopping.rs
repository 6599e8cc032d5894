//! The process's one answer to the signals that end it: SIGTERM (what Kubernetes sends before
//! it kills a pod) stops the HTTP server gracefully, SIGINT and SIGQUIT at once, as actix's
//! own signal handling did. Before the server is told to stop, the process-wide "stopping"
//! flag is raised, which:
//!
//! - ends the background tasks beside the server (the gift-card retry, the payment sync, the
//!   gauges' refresh: [`watch`]), so they take no new work;
//! - closes the connection after every answer written from then on (`Connection: close`,
//!   [`close_connections`]), so no client sends its next request over a kept-alive
//!   connection to a process that is going away.
//!
//! actix-http drains connections on a graceful stop too (an idle one closes at once, one with
//! a request in flight answers it with `Connection: close`), but its notice to a connection
//! with a request in flight was seen to go missing (about one stop in twenty under load):
//! that answer then kept the connection alive, the client sent its next request into a
//! closing socket, and the worker waited for the whole shutdown timeout. The flag here is
//! raised before actix hears of the stop, so every answer written after the drain began
//! carries `Connection: close`, whichever of the two notices arrives first.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

use std::future::{Ready, ready};

use actix_web::dev::{
    ServerHandle, Service, ServiceRequest, ServiceResponse, Transform, forward_ready,
};
use actix_web::http::ConnectionType;
use futures_util::future::{MapOk, TryFutureExt};
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::watch::{self, Receiver, Sender};

/// Read on every answer: a plain atomic, not the channel's lock.
static STOPPING: AtomicBool = AtomicBool::new(false);

fn sender() -> &'static Sender<bool> {
    static SENDER: OnceLock<Sender<bool>> = OnceLock::new();
    SENDER.get_or_init(|| watch::channel(false).0)
}

/// A flag that turns true when the process is told to stop (SIGTERM, SIGINT or SIGQUIT), for a
/// background task beside the server.
pub fn watch() -> Receiver<bool> {
    sender().subscribe()
}

fn raise() {
    STOPPING.store(true, Ordering::SeqCst);
    sender().send_replace(true);
}

/// Waits for the first of the signals, raises the flag, then stops `server`: gracefully on
/// SIGTERM, at once on SIGINT or SIGQUIT. Spawned beside every server [`crate::start`]s.
pub(crate) async fn stop_on_signal(server: ServerHandle) {
    let graceful = match first_signal().await {
        Ok(graceful) => graceful,
        Err(e) => {
            tracing::error!(error.message = %e, "cannot watch the stop signals; the server stops only when killed");
            return;
        }
    };
    raise();
    tracing::info!(graceful, "stop signal received; stopping the HTTP server");
    server.stop(graceful).await;
}

/// `true` for SIGTERM, `false` for SIGINT or SIGQUIT.
async fn first_signal() -> std::io::Result<bool> {
    let mut terminate = signal(SignalKind::terminate())?;
    let mut interrupt = signal(SignalKind::interrupt())?;
    let mut quit = signal(SignalKind::quit())?;
    Ok(tokio::select! {
        _ = terminate.recv() => true,
        _ = interrupt.recv() => false,
        _ = quit.recv() => false,
    })
}

/// Middleware: once the process is stopping, every answer closes its connection. Written out
/// rather than with `from_fn`, whose boxed future cost about 1 µs of CPU per request on the
/// lightest route (`/healthz`, one worker, measured side by side), a tenth of its whole cost.
pub(crate) struct CloseConnections;

impl<S, B> Transform<S, ServiceRequest> for CloseConnections
where
    S: Service<ServiceRequest, Response = ServiceResponse<B>, Error = actix_web::Error>,
{
    type Response = ServiceResponse<B>;
    type Error = actix_web::Error;
    type Transform = CloseConnectionsService<S>;
    type InitError = ();
    type Future = Ready<Result<Self::Transform, Self::InitError>>;

    fn new_transform(&self, service: S) -> Self::Future {
        ready(Ok(CloseConnectionsService { service }))
    }
}

pub(crate) struct CloseConnectionsService<S> {
    service: S,
}

impl<S, B> Service<ServiceRequest> for CloseConnectionsService<S>
where
    S: Service<ServiceRequest, Response = ServiceResponse<B>, Error = actix_web::Error>,
{
    type Response = ServiceResponse<B>;
    type Error = actix_web::Error;
    type Future = MapOk<S::Future, fn(ServiceResponse<B>) -> ServiceResponse<B>>;

    forward_ready!(service);

    fn call(&self, req: ServiceRequest) -> Self::Future {
        self.service.call(req).map_ok(close_if_stopping::<B>)
    }
}

fn close_if_stopping<B>(mut res: ServiceResponse<B>) -> ServiceResponse<B> {
    if STOPPING.load(Ordering::SeqCst) {
        res.response_mut()
            .head_mut()
            .set_connection_type(ConnectionType::Close);
    }
    res
}
