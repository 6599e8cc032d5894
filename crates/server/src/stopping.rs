//! The process's one answer to the signals that end it: SIGTERM (what Kubernetes sends before
//! it kills a pod) stops the HTTP server gracefully, SIGINT and SIGQUIT at once, as actix's
//! own signal handling did. Before the server is told to stop, the process-wide "stopping"
//! flag is raised, which:
//!
//! - ends the background tasks beside the server (the gift-card retry, the payment sync, the
//!   gauges' refresh: [`watch`]), so they take no new work;
//! - closes the connection after every answer written from then on (`Connection: close`,
//!   [`CloseConnections`]), so no client sends its next request over a kept-alive
//!   connection to a process that is going away.
//!
//! On SIGTERM the server then keeps serving for the drain (`HTTP_STOP_DRAIN_SECS`), and only
//! then tells actix to stop. actix's graceful stop closes every idle kept-alive connection at
//! once, and a caller may be writing a request on one of them at that moment: HTTP/1.1 cannot
//! tell it whether that request was read, so it fails the call ("connection closed before
//! message completed"), which a rolling deploy did once per service pair. During the drain a
//! connection is closed after an answer that says so, by its caller, or by the server's own
//! limits, each longer than the callers keep an idle connection (`HTTP_CALLER_IDLE_SECS`;
//! `config::HttpLimits::stop_problems`), so whatever is still open when the drain ends is idle
//! and no caller will send on it again. The drain ends early once no connection is open
//! (`docs/decisions.md`, "Lossless rollouts", also for the known gaps: an answer a middleware
//! gives as an error carries no `Connection: close`).
//!
//! actix-http also answers a request in flight at the stop with `Connection: close`, but its
//! notice to such a connection was seen to go missing (about one stop in twenty under load):
//! the flag here is raised before actix hears of the stop, so every answer written after the
//! drain began carries `Connection: close`, whichever of the two notices arrives first.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use std::future::{Ready, ready};

use actix_web::dev::{
    Extensions, ServerHandle, Service, ServiceRequest, ServiceResponse, Transform, forward_ready,
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

/// Waits for the first of the signals and raises the flag; on SIGTERM serves the connections
/// still `open` for up to `drain`, then stops `server`: gracefully on SIGTERM, at once on
/// SIGINT or SIGQUIT, and at once on any second signal during the drain (a person's second
/// Ctrl-C or `kill`; Kubernetes sends SIGTERM once, then SIGKILL at the grace period's end).
/// Spawned beside every server [`crate::start`]s.
pub(crate) async fn stop_on_signal(server: ServerHandle, open: OpenConnections, drain: Duration) {
    let graceful = match first_signal().await {
        Ok(graceful) => graceful,
        Err(e) => {
            tracing::error!(error.message = %e, "cannot watch the stop signals; the server stops only when killed");
            return;
        }
    };
    raise();
    let graceful = if graceful {
        tracing::info!(
            drain_seconds = drain.as_secs(),
            open_connections = open.count(),
            "stop signal received; serving the open connections, each answer closing its own, \
             until their callers have let go of them"
        );
        tokio::select! {
            left = open.until_none(drain) => {
                tracing::info!(open_connections = left, "drain over; stopping the HTTP server");
                true
            }
            // A second signal, or the signals cannot be watched again: stop now.
            _ = first_signal() => false,
        }
    } else {
        tracing::info!("stop signal received; stopping the HTTP server at once");
        false
    };
    server.stop(graceful).await;
}

/// How many connections a server has open: one more when actix accepts one (`on_connect`,
/// [`OpenConnections::opened`]), one fewer when the guard left in the connection's data is
/// dropped with the connection.
#[derive(Clone, Default)]
pub(crate) struct OpenConnections(Arc<AtomicUsize>);

/// Lives as long as its connection.
struct Open(Arc<AtomicUsize>);

impl Drop for Open {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl OpenConnections {
    /// actix's `on_connect` hook: counts the new connection until it closes.
    pub(crate) fn opened(&self, data: &mut Extensions) {
        self.0.fetch_add(1, Ordering::SeqCst);
        data.insert(Open(Arc::clone(&self.0)));
    }

    fn count(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }

    /// Returns once no connection is open, or after `drain` with how many still are.
    async fn until_none(&self, drain: Duration) -> usize {
        let deadline = tokio::time::Instant::now() + drain;
        // Polled: this runs once, at the stop, and the connections' own code stays untouched.
        let mut tick = tokio::time::interval(Duration::from_millis(20));
        loop {
            tick.tick().await;
            let open = self.count();
            if open == 0 || tokio::time::Instant::now() >= deadline {
                return open;
            }
        }
    }
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
pub struct CloseConnections;

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

pub struct CloseConnectionsService<S> {
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
