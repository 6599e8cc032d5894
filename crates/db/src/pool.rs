//! The connection pool: a wait timeout (a pool with none hangs forever when exhausted), a
//! connect timeout, a maximum connection age, and per-connection `statement_timeout` and
//! `lock_timeout` (given at connection start, [`PoolSettings::startup_options`]) so that no
//! query or lock wait can hold a request forever.
//!
//! A connection handed out again is checked with `SELECT 1` only when it sat idle for more
//! than [`PING_AFTER_IDLE`], and the check may take [`CHECK_TIMEOUT`]: under load that saves
//! a round trip per request (a quarter of a balance read's statements), and after a database
//! restart the idle connections, which are all of them once the restart took longer than
//! that, are still checked and replaced. A connection that broke while in use, or that the
//! server or a pooler closed while it sat in the pool (its I/O task saw the close), is never
//! handed out again (diesel-async reports it broken). Connections are opened by
//! [`crate::Connector`]: host by host, each with its own deadline.
//!
//! Behind PgBouncer in transaction mode the statement cache is off
//! ([`PoolSettings::statement_cache`]): each query then goes out as one unnamed
//! parse-bind-execute (vendor/README.md), because the pooler may give every message group to
//! another server connection, where a statement prepared earlier does not exist.

use std::time::Duration;

use deadpool::Runtime;
use deadpool::managed::{Hook, HookError, Timeouts};
use diesel::ConnectionError;
use diesel_async::pooled_connection::deadpool::{Object, Pool as DeadPool};
use diesel_async::pooled_connection::{
    AsyncDieselConnectionManager, ManagerConfig, RecyclingMethod,
};
use diesel_async::{AsyncPgConnection, SimpleAsyncConnection};

use crate::connect::Connector;

pub type Pool = DeadPool<AsyncPgConnection>;
pub type Conn = Object<AsyncPgConnection>;
/// Why no connection could be had: `Timeout` when the pool stayed exhausted past its wait.
pub type PoolError = diesel_async::pooled_connection::deadpool::PoolError;

/// A connection idle for longer than this is checked before it is handed out again.
pub const PING_AFTER_IDLE: Duration = Duration::from_secs(1);
/// How long that check may take before the connection is dropped and another one made: a
/// live server answers `SELECT 1` in milliseconds.
pub const CHECK_TIMEOUT: Duration = Duration::from_secs(1);

/// Everything the pool needs; each service fills it from its configuration.
#[derive(Clone)]
pub struct PoolSettings {
    pub url: String,
    /// At least 2: a handler that needs a second connection must not deadlock the pool.
    pub max_size: usize,
    pub wait_timeout: Duration,
    /// Per host of the URL: the start of a connection on it (TCP, startup, login, the
    /// `target_session_attrs` check) must finish within it (`crate::connect`).
    pub connect_timeout: Duration,
    /// The session's `statement_timeout`; zero is PostgreSQL's "none" (the command-line
    /// tools connected straight to PostgreSQL: a migration or an audit may run long).
    pub statement_timeout: Duration,
    /// The session's `lock_timeout`; zero is "none".
    pub lock_timeout: Duration,
    pub max_lifetime: Duration,
    /// Prepared statements are cached per connection (the default). Off when the URL points
    /// at a pooler in transaction mode: no statement is then prepared under a name.
    pub statement_cache: bool,
}

impl PoolSettings {
    pub const MIN_SIZE: usize = 2;

    /// Above `statement_timeout`, how long a server that owes an answer may stay silent
    /// before the connection is taken for frozen ([`Self::reply_timeout`]): the longest a
    /// pooler may queue a query before a server connection is free (PgBouncer's
    /// `query_wait_timeout`, 5 s in k8s/components/pgbouncer) plus slack.
    pub const REPLY_MARGIN: Duration = Duration::from_secs(10);

    /// Sensible timeouts around a URL and size.
    pub fn new(url: impl Into<String>, max_size: usize) -> Self {
        Self {
            url: url.into(),
            max_size: max_size.max(Self::MIN_SIZE),
            wait_timeout: Duration::from_secs(5),
            connect_timeout: Duration::from_secs(5),
            statement_timeout: Duration::from_secs(10),
            lock_timeout: Duration::from_secs(5),
            max_lifetime: Duration::from_secs(30 * 60),
            statement_cache: true,
        }
    }

    /// A command-line tool's connection (migrate, seed, audit): no statement or lock
    /// timeout, since a migration or an audit may run long and `migrate` waits on the
    /// advisory lock for as long as another migration runs. Through PgBouncer the tool has
    /// the server connections' timeouts instead ([`Self::startup_options`]).
    pub fn one_off(url: impl Into<String>) -> Self {
        Self {
            statement_timeout: Duration::ZERO,
            lock_timeout: Duration::ZERO,
            ..Self::new(url, Self::MIN_SIZE)
        }
    }

    /// The connection's timeouts as startup parameters (`options` of the startup packet),
    /// which PostgreSQL takes as the session's own defaults. No connection of ours changes
    /// them with `SET`: behind a pooler in transaction mode a `SET` lands on whichever
    /// server connection ran it and stays there after the client has gone, so a tool's
    /// "no timeout" would have become the next service transaction's. PgBouncer does not
    /// forward this parameter (`ignore_startup_parameters = options` in
    /// k8s/components/pgbouncer); its `connect_query`, [`Self::session_setup`], gives every
    /// server connection the services' timeouts instead, and a tool through it runs with
    /// those (docs/decisions.md, "Session settings behind PgBouncer").
    pub fn startup_options(&self) -> String {
        format!(
            "-c statement_timeout={} -c lock_timeout={}",
            self.statement_timeout.as_millis(),
            self.lock_timeout.as_millis()
        )
    }

    /// The services' timeouts as SQL, for a pooler to run on each of its server connections
    /// as it opens them (PgBouncer's `connect_query`, checked against this by
    /// `e2e::pgbouncer`). No connection of ours runs it ([`Self::startup_options`]).
    pub fn session_setup(&self) -> String {
        format!(
            "SET statement_timeout = {}; SET lock_timeout = {}",
            self.statement_timeout.as_millis(),
            self.lock_timeout.as_millis()
        )
    }

    /// The longest a connection waits for an owed answer while the server sends nothing
    /// (`crate::reply_deadline`): `statement_timeout` + [`Self::REPLY_MARGIN`], or a day
    /// when there is no statement timeout (a long migration sends nothing until it ends).
    pub fn reply_timeout(&self) -> Duration {
        if self.statement_timeout.is_zero() {
            Duration::from_secs(24 * 3600)
        } else {
            self.statement_timeout + Self::REPLY_MARGIN
        }
    }
}

/// The URL holds the password: never print it.
impl std::fmt::Debug for PoolSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PoolSettings")
            .field("url", &"<redacted>")
            .field("max_size", &self.max_size)
            .field("wait_timeout", &self.wait_timeout)
            .field("statement_cache", &self.statement_cache)
            .finish_non_exhaustive()
    }
}

#[derive(Debug, thiserror::Error)]
#[error("cannot build the database pool: {0}")]
pub struct BuildError(String);

/// Builds the pool. No connection is made here: the first request (or `/readyz`) makes one,
/// so a service starts even while the database is still coming up.
pub fn build_pool(settings: &PoolSettings) -> Result<Pool, BuildError> {
    let connector = Connector::new(settings).map_err(|e| BuildError(e.to_string()))?;
    // Every host may take its whole connect timeout before the one that answers, and the
    // connection's setup (diesel-async's time zone and encoding) needs what is left: behind a
    // pooler (one host) 6 s, more than its queue wait (5 s, k8s/components/pgbouncer), so that
    // its busy answer arrives first.
    let create_timeout =
        settings.connect_timeout * connector.host_count() as u32 + Duration::from_secs(1);
    let mut config = ManagerConfig::<AsyncPgConnection>::default();
    // The check is the idle hook's below; diesel-async's own would ping on every checkout.
    config.recycling_method = RecyclingMethod::Fast;
    // Where every connection is made and its I/O runs: the runtime that builds the pool (the
    // process's main one), which outlives the HTTP server's workers. Each actix worker is a
    // runtime of its own that ends when that worker has answered its last request, and a
    // task lives on the runtime that spawned it: a connection opened by a worker's request
    // would die with that worker while another worker's request still uses it ("database
    // error: connection closed" during a graceful stop).
    let home = tokio::runtime::Handle::try_current()
        .map_err(|e| BuildError(format!("no async runtime to run the connections on: {e}")))?;
    config.custom_setup = Box::new(move |_url| {
        let connector = connector.clone();
        let home = home.clone();
        Box::pin(async move {
            // A task of its own, so that a caller who stops waiting (`/readyz` gives up
            // after 3 s, less than a frozen host's connect timeout) does not cancel it: it
            // still finds the host that answers, and the next attempt starts there.
            home.spawn(async move { connector.connect().await })
                .await
                .map_err(|e| ConnectionError::BadConnection(format!("connect task: {e}")))?
        })
    });
    let manager = AsyncDieselConnectionManager::new_with_config(&settings.url, config);
    let max_lifetime = settings.max_lifetime;
    DeadPool::builder(manager)
        .max_size(settings.max_size.max(PoolSettings::MIN_SIZE))
        .timeouts(Timeouts {
            wait: Some(settings.wait_timeout),
            create: Some(create_timeout),
            recycle: Some(Duration::from_secs(2)),
        })
        .runtime(Runtime::Tokio1)
        // Old connections are replaced so that a failover or a DNS change is picked up.
        .pre_recycle(Hook::sync_fn(move |_, metrics| {
            if metrics.age() > max_lifetime {
                Err(HookError::message("connection reached its maximum age"))
            } else {
                Ok(())
            }
        }))
        .pre_recycle(Hook::async_fn(|conn: &mut AsyncPgConnection, metrics| {
            let idle = metrics.last_used();
            Box::pin(async move {
                if idle > PING_AFTER_IDLE {
                    // deadpool's recycle timeout does not cover this hook: without a
                    // bound, a check queued behind a busy pooler, or sent to a frozen
                    // server, would hold the request until the pooler's or the reply's
                    // deadline.
                    match tokio::time::timeout(CHECK_TIMEOUT, conn.batch_execute("SELECT 1")).await
                    {
                        Ok(Ok(())) => {}
                        Ok(Err(e)) => {
                            return Err(HookError::message(format!(
                                "idle connection failed its check: {e}"
                            )));
                        }
                        Err(_) => {
                            return Err(HookError::message(
                                "idle connection did not answer its check",
                            ));
                        }
                    }
                }
                Ok(())
            })
        }))
        .build()
        .map_err(|e| BuildError(e.to_string()))
}

/// A snapshot of pool usage, for `/metrics`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolStatus {
    pub max_size: usize,
    pub size: usize,
    pub available: usize,
    pub waiting: usize,
}

impl PoolStatus {
    pub fn of(pool: &Pool) -> Self {
        let s = pool.status();
        Self {
            max_size: s.max_size,
            size: s.size,
            available: s.available,
            waiting: s.waiting,
        }
    }

    pub fn in_use(&self) -> usize {
        self.size.saturating_sub(self.available)
    }
}

/// `/readyz`: a connection can be had and answers a query.
pub async fn check_ready(pool: &Pool) -> Result<(), String> {
    let mut conn = pool.get().await.map_err(|e| e.to_string())?;
    conn.batch_execute("SELECT 1")
        .await
        .map_err(|e| e.to_string())
}
