//! Running a binary: its subcommands, the HTTP server with graceful shutdown, exit codes.

use std::fmt::Display;
use std::net::TcpListener;
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use actix_web::body::MessageBody;
use actix_web::dev::{Server, ServiceFactory, ServiceRequest, ServiceResponse};
use actix_web::http::KeepAlive;
use actix_web::{App, Error, HttpServer};
use diesel_async::{AsyncConnection, AsyncPgConnection};

use crate::AppSettings;
use crate::config::{CommonConfig, ConfigError, DatabaseConfig, Env, HttpLimits};

/// How long a stopping server lets in-flight requests finish; above the 20 s pay timeout.
pub const SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(25);

/// A service's fixture loader: upserts its sections of the fixture inside the transaction it
/// is given and reports one line per section for the log and every row it refused (a
/// refused row is skipped, never the file: `crate::seed`). An error ends the load and
/// nothing is written.
pub type SeedFn =
    for<'c> fn(&'c mut AsyncPgConnection, &'c serde_json::Value) -> crate::seed::SeedFuture<'c>;

/// Builds the HTTP server for `factory` on an already bound listener, with `limits` on its
/// connections. The returned server runs until SIGTERM or SIGINT; on SIGTERM (what
/// Kubernetes sends) it stops accepting and lets in-flight requests finish for up to
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
    let server = HttpServer::new(factory)
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
    tokio::spawn(crate::stopping::stop_on_signal(server.handle()));
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

/// Why a service could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error(transparent)]
    Pool(#[from] db::BuildError),
    #[error("cannot start the HTTP server: {0}")]
    Http(#[from] std::io::Error),
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

/// What a service adds to the shared app: its name, its envelope, its route list and the
/// document built from it.
pub struct ServiceApp {
    pub name: &'static str,
    pub envelope: envelope::Envelope,
    pub routes: &'static crate::Routes,
    pub openapi: utoipa::openapi::OpenApi,
}

impl ServiceApp {
    /// The service `name` answering in `envelope`, its `routes`, and its document: `base`
    /// (title, description, tags, security schemes) with the routes' operations
    /// ([`crate::Routes::openapi`]).
    pub fn new(
        name: &'static str,
        envelope: envelope::Envelope,
        routes: &'static crate::Routes,
        base: utoipa::openapi::OpenApi,
    ) -> Self {
        Self {
            name,
            envelope,
            routes,
            openapi: routes.openapi(base, envelope),
        }
    }
}

/// A service's server: the shared app ([`crate::app`]) with `service`'s routes and the data
/// `data` registers (called once per worker), on `listener`, with `pool` behind `/readyz`.
pub fn serve<F>(
    listener: TcpListener,
    common: &CommonConfig,
    pool: db::Pool,
    service: ServiceApp,
    data: F,
) -> Result<Server, StartError>
where
    F: Fn(&mut actix_web::web::ServiceConfig) + Clone + Send + 'static,
{
    crate::ops_metrics::register();
    let settings = AppSettings::new(
        service.name,
        service.envelope,
        common,
        pool,
        service.openapi,
    );
    let routes = service.routes;
    Ok(start(listener, common.workers, settings, move |cfg| {
        data(cfg);
        routes.configure(cfg);
    })?)
}

/// An outbound HTTP client (`telemetry::client::http_client`) built at start, where a
/// failure stops the service.
pub fn http_client(timeout: Duration) -> Result<telemetry::client::HttpClient, StartError> {
    telemetry::client::http_client(timeout).map_err(|e| StartError::Http(std::io::Error::other(e)))
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

/// One service binary: its name, default port and migrations.
pub struct Binary {
    pub name: &'static str,
    pub default_port: u16,
    pub migrations: db::Migrations,
}

impl Binary {
    pub const fn new(name: &'static str, default_port: u16, migrations: db::Migrations) -> Self {
        Self {
            name,
            default_port,
            migrations,
        }
    }

    /// Runs one of the common subcommands; `load` and `build` serve, `seed` loads fixtures.
    pub fn run<C, E: Display>(
        &self,
        command: crate::Command,
        load: impl FnOnce(&mut Env, CommonConfig, DatabaseConfig) -> C,
        build: impl FnOnce(C, TcpListener) -> Result<Server, E>,
        seed: SeedFn,
    ) -> ExitCode {
        match command {
            crate::Command::Serve => self.serve(load, build),
            crate::Command::Migrate => self.migrate(),
            crate::Command::WaitForMigrations { timeout_secs } => {
                self.wait_for_migrations(Duration::from_secs(timeout_secs))
            }
            crate::Command::Seed { file } => self.seed(&file, seed),
        }
    }

    /// `serve`: reads the configuration (`load` adds the service's own variables to the
    /// common ones), sets up telemetry, binds, and serves until stopped.
    pub fn serve<C, E: Display>(
        &self,
        load: impl FnOnce(&mut Env, CommonConfig, DatabaseConfig) -> C,
        build: impl FnOnce(C, TcpListener) -> Result<Server, E>,
    ) -> ExitCode {
        let mut env = Env::from_process();
        let common = CommonConfig::from_env(&mut env, self.name, self.default_port);
        let database = DatabaseConfig::from_env(&mut env);
        let config = load(&mut env, common.clone(), database);
        let config = match env.finish(config) {
            Ok(config) => config,
            Err(e) => return self.config_failure(e),
        };
        self.with_runtime(&common, async move {
            let listener = bind(common.bind_addr, common.http.backlog)
                .map_err(|e| format!("cannot listen on {}: {e}", common.bind_addr))?;
            let server = build(config, listener).map_err(|e| format!("cannot start: {e}"))?;
            tracing::info!(
                http.addr = %common.bind_addr,
                workers = common.workers,
                max_connections = common.http.max_connections,
                "listening"
            );
            server.await.map_err(|e| format!("server failed: {e}"))?;
            tracing::info!("stopped");
            Ok(())
        })
    }

    /// `migrate`: applies pending migrations under the advisory lock.
    pub fn migrate(&self) -> ExitCode {
        let migrations = self.migrations;
        self.with_database(async move |database| {
            let applied = db::run_migrations(&database, migrations)
                .await
                .map_err(|e| e.to_string())?;
            tracing::info!(db.name = migrations.name, applied = ?applied, "migrations are up to date");
            Ok(())
        })
    }

    /// A service's own subcommand that works on its database: reads the `DATABASE_*`
    /// variables (and the common ones, for logs), runs `work` with the settings a tool's
    /// connection is made with ([`DatabaseConfig::tool_settings`], for `db::connect`), exits
    /// 1 with its error.
    pub fn with_database<F, Fut>(&self, work: F) -> ExitCode
    where
        F: FnOnce(db::PoolSettings) -> Fut,
        Fut: std::future::Future<Output = Result<(), String>>,
    {
        self.with_database_code(|database| {
            let work = work(database);
            async move { work.await.map(|()| ExitCode::SUCCESS) }
        })
    }

    /// [`Self::with_database`] for work that chooses its own exit code on success (a
    /// command that refuses its arguments only once it has asked the database).
    pub fn with_database_code<F, Fut>(&self, work: F) -> ExitCode
    where
        F: FnOnce(db::PoolSettings) -> Fut,
        Fut: std::future::Future<Output = Result<ExitCode, String>>,
    {
        let Some((common, database)) = self.database_only() else {
            return ExitCode::from(2);
        };
        self.with_runtime_code(&common, work(database.tool_settings()))
    }

    /// `wait-for-migrations`: polls until no embedded migration is pending. A database that
    /// cannot be reached yet counts as "not yet", so the init container also waits out a
    /// database that starts after it.
    pub fn wait_for_migrations(&self, timeout: Duration) -> ExitCode {
        let migrations = self.migrations;
        self.with_database(async move |database| {
            let deadline = tokio::time::Instant::now() + timeout;
            loop {
                let last = match db::pending_migrations(&database, migrations).await {
                    Ok(pending) if pending.is_empty() => {
                        tracing::info!(db.name = migrations.name, "migrations are up to date");
                        return Ok(());
                    }
                    Ok(pending) => format!("pending migrations: {}", pending.join(", ")),
                    Err(e) => e.to_string(),
                };
                if tokio::time::Instant::now() >= deadline {
                    return Err(format!(
                        "gave up after {} s waiting for the {} migrations ({last})",
                        timeout.as_secs(),
                        migrations.name
                    ));
                }
                tracing::info!(db.name = migrations.name, "waiting for migrations: {last}");
                tokio::time::sleep(Duration::from_secs(2)).await;
            }
        })
    }

    /// `seed FILE`: loads this service's sections of a fixture in one transaction. Rows the
    /// loader refused are listed on stderr, one line each, after the valid rows are
    /// committed; the exit code is then [`crate::seed::EXIT_ROWS_REJECTED`], so a script
    /// notices. A file that cannot be read, or a failure of the database, writes nothing
    /// and exits 1.
    pub fn seed(&self, file: &Path, seed: SeedFn) -> ExitCode {
        let Some((common, database)) = self.database_only() else {
            return ExitCode::from(2);
        };
        let file = file.to_owned();
        let name = self.name;
        self.with_runtime_code(&common, async move {
            let text = std::fs::read_to_string(&file)
                .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
            let fixture: serde_json::Value = serde_json::from_str(&text)
                .map_err(|e| format!("{} is not valid JSON: {e}", file.display()))?;
            if !fixture.is_object() {
                return Err(format!(
                    "{} must hold a JSON object of sections",
                    file.display()
                ));
            }
            let mut conn = db::connect(&database.tool_settings())
                .await
                .map_err(|e| format!("cannot connect to the database: {e}"))?;
            let report = conn
                .transaction::<_, anyhow::Error, _>(async |conn| seed(conn, &fixture).await)
                .await
                .map_err(|e| {
                    format!(
                        "seeding {} failed, nothing was written: {e:#}",
                        file.display()
                    )
                })?;
            for line in &report.lines {
                tracing::info!(fixture = %file.display(), "{line}");
            }
            if report.rejected.is_empty() {
                return Ok(ExitCode::SUCCESS);
            }
            for rejected in &report.rejected {
                tracing::error!(fixture = %file.display(), "row rejected: {rejected}");
                eprintln!("{name}: {}: rejected {rejected}", file.display());
            }
            eprintln!(
                "{name}: {}: {} row(s) rejected and skipped; the other rows were loaded",
                file.display(),
                report.rejected.len()
            );
            Ok(ExitCode::from(crate::seed::EXIT_ROWS_REJECTED))
        })
    }

    fn database_only(&self) -> Option<(CommonConfig, DatabaseConfig)> {
        let mut env = Env::from_process();
        let common = CommonConfig::from_env(&mut env, self.name, self.default_port);
        let database = DatabaseConfig::from_env(&mut env);
        match env.finish((common, database)) {
            Ok(pair) => Some(pair),
            Err(e) => {
                self.config_failure(e);
                None
            }
        }
    }

    fn config_failure(&self, e: ConfigError) -> ExitCode {
        for line in e.0 {
            eprintln!("{}: configuration error: {line}", self.name);
        }
        ExitCode::from(2)
    }

    /// Runs `work` on a multi-threaded runtime with telemetry set up, and turns its outcome
    /// into an exit code (1 with one line on stderr on failure).
    fn with_runtime(
        &self,
        common: &CommonConfig,
        work: impl std::future::Future<Output = Result<(), String>>,
    ) -> ExitCode {
        self.with_runtime_code(
            common,
            async move { work.await.map(|()| ExitCode::SUCCESS) },
        )
    }

    /// [`Self::with_runtime`] for work that chooses its own exit code on success.
    fn with_runtime_code(
        &self,
        common: &CommonConfig,
        work: impl std::future::Future<Output = Result<ExitCode, String>>,
    ) -> ExitCode {
        let guard = match telemetry::init(&common.telemetry) {
            Ok(guard) => guard,
            Err(e) => {
                eprintln!("{}: configuration error: {e}", self.name);
                return ExitCode::from(2);
            }
        };
        let runtime = match tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
        {
            Ok(runtime) => runtime,
            Err(e) => {
                eprintln!("{}: cannot start the async runtime: {e}", self.name);
                return ExitCode::from(1);
            }
        };
        let outcome = runtime.block_on(work);
        guard.shutdown();
        match outcome {
            Ok(code) => code,
            Err(e) => {
                tracing::error!(error.message = %e, "{} failed", self.name);
                eprintln!("{}: {e}", self.name);
                ExitCode::from(1)
            }
        }
    }
}

/// A flag that turns true on SIGTERM (what Kubernetes sends), SIGINT or SIGQUIT, the signals on
/// which the HTTP server stops, so that a background task beside the server (the gift-card
/// retry, the payment sync) takes no new work once the process is told to end
/// (`crate::stopping`).
pub fn shutdown_watch() -> tokio::sync::watch::Receiver<bool> {
    crate::stopping::watch()
}
