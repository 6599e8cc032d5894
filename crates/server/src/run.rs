//! Running a binary: its subcommands, the HTTP server with graceful shutdown, exit codes.
//!
//! This module is the HTTP server itself; `service` puts a service's routes and data on it,
//! `binary` is the command line's `serve` and the runtime every subcommand runs on, and
//! `database_commands` the subcommands that work on the database (`migrate`,
//! `wait-for-migrations`, `seed`, a service's own tools).

mod binary;
mod database_commands;
mod service;

use std::net::TcpListener;
use std::time::Duration;

use actix_web::body::MessageBody;
use actix_web::dev::{Server, ServiceFactory, ServiceRequest, ServiceResponse};
use actix_web::http::KeepAlive;
use actix_web::{App, Error, HttpServer};

use crate::AppSettings;
use crate::config::HttpLimits;

pub use binary::Binary;
pub use database_commands::SeedFn;
pub use service::{ServiceApp, StartError, http_client, serve};

/// How long a stopping server lets in-flight requests finish; above the 20 s pay timeout.
pub const SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(25);

/// Builds the HTTP server for `factory` on an already bound listener, with `limits` on its
/// connections. The returned server runs until SIGTERM or SIGINT; on SIGTERM (what
/// Kubernetes sends) it serves its open connections for the drain (`limits.stop_drain`,
/// `crate::stopping`), then stops accepting and lets in-flight requests finish for up to
/// [`SHUTDOWN_TIMEOUT`].
///
/// What bounds a slow or idle client (`docs/decisions.md`, "Abuse limits"):
/// - a connection's first request head: `head_timeout` (actix's `client_request_timeout`,
///   408 and close);
/// - a body: the app's body middleware (`envelope::body_limits`, 408 in the route's envelope);
/// - an idle keep-alive connection: `keep_alive`;
/// - a closing connection: `disconnect_timeout` (actix's `client_disconnect_timeout`);
/// - all of them together: `max_connections` (split over the workers; past it, accepting
///   pauses and new connections wait in the listen backlog, see [`bind`]).
///
/// actix arms the head deadline for a connection's first request only: a later request's
/// head trickled on a kept-alive connection is bounded by `max_connections` alone (the
/// "known gap" of `docs/decisions.md`; `keep_alive` zero closes it).
///
/// There is no deadline on a whole request: a handler is never dropped half way through
/// (a future dropped inside a transaction would hand its pooled connection back mid-way).
/// Handlers end on their own because every wait inside them is bounded: the pool's wait and
/// connect timeouts, PostgreSQL's `statement_timeout` and `lock_timeout` (`db::pool`), and
/// each outbound HTTP client's timeout. `max_connection_rate` is not set: actix applies it
/// to TLS handshakes only, and these services speak plain HTTP behind the ingress.
pub fn http_server_with<F, T, B>(
    listener: TcpListener,
    workers: usize,
    limits: HttpLimits,
    factory: F,
) -> std::io::Result<Server>
where
    F: Fn() -> App<T> + Send + Clone + 'static,
    T: ServiceFactory<
            ServiceRequest,
            Config = (),
            Response = ServiceResponse<B>,
            Error = Error,
            InitError = (),
        > + 'static,
    B: MessageBody + 'static,
{
    let keep_alive = if limits.keep_alive.is_zero() {
        KeepAlive::Disabled
    } else {
        KeepAlive::Timeout(limits.keep_alive)
    };
    let open = crate::stopping::OpenConnections::default();
    let counted = open.clone();
    let server = HttpServer::new(factory)
        .on_connect(move |_, data| counted.opened(data))
        .workers(workers)
        .max_connections(limits.connections_per_worker(workers))
        .client_request_timeout(limits.head_timeout)
        .client_disconnect_timeout(limits.disconnect_timeout)
        .keep_alive(keep_alive)
        .shutdown_timeout(SHUTDOWN_TIMEOUT.as_secs())
        // The signals are ours: the stopping flag goes up before the server hears of them.
        .disable_signals()
        .listen(listener)?
        .run();
    tokio::spawn(crate::stopping::stop_on_signal(
        server.handle(),
        open,
        limits.stop_drain,
    ));
    Ok(server)
}

/// Binds `addr` with a listen backlog of `backlog` (`HTTP_BACKLOG`; the kernel caps it at
/// `net.core.somaxconn`). actix's own `backlog` setting applies only to addresses it binds
/// itself, and the services are handed a bound listener. Needs a Tokio runtime.
pub fn bind(addr: std::net::SocketAddr, backlog: u32) -> std::io::Result<TcpListener> {
    let socket = if addr.is_ipv4() {
        tokio::net::TcpSocket::new_v4()?
    } else {
        tokio::net::TcpSocket::new_v6()?
    };
    // As std's TcpListener::bind does on Unix: a restarted service can take its port again
    // while the old connections are in TIME_WAIT.
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(backlog)?.into_std()
}

/// The server of a service: the shared app from `settings` plus the service's own routes
/// and data, registered by `configure`, with the limits of `settings.http`.
pub fn start<F>(
    listener: TcpListener,
    workers: usize,
    settings: AppSettings,
    configure: F,
) -> std::io::Result<Server>
where
    F: Fn(&mut actix_web::web::ServiceConfig) + Clone + Send + 'static,
{
    let limits = settings.http;
    http_server_with(listener, workers, limits, move || {
        crate::app(settings.clone()).configure(configure.clone())
    })
}

/// Serves `factory` on a free loopback port in the background and returns its base URL.
/// Tests use it for the real HTTP servers that play other services.
pub fn spawn_local<F, T, B>(factory: F) -> std::io::Result<String>
where
    F: Fn() -> App<T> + Send + Clone + 'static,
    T: ServiceFactory<
            ServiceRequest,
            Config = (),
            Response = ServiceResponse<B>,
            Error = Error,
            InitError = (),
        > + 'static,
    B: MessageBody + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let base = format!("http://{}", listener.local_addr()?);
    tokio::spawn(http_server_with(
        listener,
        2,
        HttpLimits::default(),
        factory,
    )?);
    Ok(base)
}

/// A flag that turns true on SIGTERM (what Kubernetes sends), SIGINT or SIGQUIT, the signals on
/// which the HTTP server stops, so that a background task beside the server (the gift-card
/// retry, the payment sync) takes no new work once the process is told to end
/// (`crate::stopping`).
pub fn shutdown_watch() -> tokio::sync::watch::Receiver<bool> {
    crate::stopping::watch()
}

/// A background task's wait between two passes: `interval`, or less when `stop` (a
/// [`shutdown_watch`]) turns true meanwhile; true when the task is to stop. A flag nobody can
/// raise any more (its sender gone) never stops it: the task keeps its pace.
pub async fn pause_or_stop(
    stop: &mut tokio::sync::watch::Receiver<bool>,
    interval: std::time::Duration,
) -> bool {
    // `None`: the interval passed; `Some(false)`: nobody can raise the flag any more.
    let raised = tokio::select! {
        raised = stop.wait_for(|stopped| *stopped) => Some(raised.is_ok()),
        () = tokio::time::sleep(interval) => None,
    };
    match raised {
        Some(true) => true,
        Some(false) => {
            tokio::time::sleep(interval).await;
            false
        }
        None => *stop.borrow(),
    }
}
