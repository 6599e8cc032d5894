//! The connection pool: a wait timeout (a pool with none hangs forever when exhausted), a
//! connect timeout, a maximum connection age, and per-connection `statement_timeout` and
//! `lock_timeout` so that no query or lock wait can hold a request forever.
//!
//! A connection handed out again is checked with `SELECT 1` only when it sat idle for more
//! than [`PING_AFTER_IDLE`]: under load that saves a round trip per request (a quarter of a
//! balance read's statements), and after a database restart the idle connections, which
//! are all of them once the restart took longer than that, are still checked and replaced.
//! A connection that broke while in use is never handed out again (diesel-async marks it).
//!
//! Behind PgBouncer in transaction mode the statement cache is off
//! ([`PoolSettings::statement_cache`]): each query then goes out as one unnamed
//! parse-bind-execute (vendor/README.md), because the pooler may give every message group to
//! another server connection, where a statement prepared earlier does not exist.

use std::time::Duration;

use deadpool::Runtime;
use deadpool::managed::{Hook, HookError, Timeouts};
use diesel::ConnectionError;
use diesel::connection::CacheSize;
use diesel_async::pooled_connection::deadpool::{Object, Pool as DeadPool};
use diesel_async::pooled_connection::{
    AsyncDieselConnectionManager, ManagerConfig, RecyclingMethod,
};
use diesel_async::{AsyncConnection, AsyncPgConnection, SimpleAsyncConnection};

pub type Pool = DeadPool<AsyncPgConnection>;
pub type Conn = Object<AsyncPgConnection>;
/// Why no connection could be had: `Timeout` when the pool stayed exhausted past its wait.
pub type PoolError = diesel_async::pooled_connection::deadpool::PoolError;

/// A connection idle for longer than this is checked before it is handed out again.
pub const PING_AFTER_IDLE: Duration = Duration::from_secs(1);

/// Everything the pool needs; each service fills it from its configuration.
#[derive(Clone)]
pub struct PoolSettings {
    pub url: String,
    /// At least 2: a handler that needs a second connection must not deadlock the pool.
    pub max_size: usize,
    pub wait_timeout: Duration,
    pub connect_timeout: Duration,
    pub statement_timeout: Duration,
    pub lock_timeout: Duration,
    pub max_lifetime: Duration,
    /// Prepared statements are cached per connection (the default). Off when the URL points
    /// at a pooler in transaction mode: no statement is then prepared under a name.
    pub statement_cache: bool,
}

impl PoolSettings {
    pub const MIN_SIZE: usize = 2;

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
    let connect_timeout = settings.connect_timeout;
    let statement_cache = settings.statement_cache;
    // Behind a pooler in transaction mode these land on whichever server connection runs
    // them; every client sets the same values, and the pooler's own setup for its server
    // connections (PgBouncer's connect_query) makes sure each one has them.
    let session_setup = format!(
        "SET statement_timeout = {}; SET lock_timeout = {};",
        settings.statement_timeout.as_millis(),
        settings.lock_timeout.as_millis()
    );
    let mut config = ManagerConfig::<AsyncPgConnection>::default();
    // The check is the idle hook's below; diesel-async's own would ping on every checkout.
    config.recycling_method = RecyclingMethod::Fast;
    config.custom_setup = Box::new(move |url| {
        let url = url.to_owned();
        let session_setup = session_setup.clone();
        Box::pin(async move {
            let mut conn =
                tokio::time::timeout(connect_timeout, AsyncPgConnection::establish(&url))
                    .await
                    .map_err(|_| {
                        ConnectionError::BadConnection(
                            "timed out connecting to the database".into(),
                        )
                    })??;
            if !statement_cache {
                conn.set_prepared_statement_cache_size(CacheSize::Disabled);
            }
            conn.batch_execute(&session_setup)
                .await
                .map_err(|e| ConnectionError::BadConnection(e.to_string()))?;
            conn.set_instrumentation(crate::sql_spans::SqlSpans::default());
            Ok(conn)
        })
    });
    let manager = AsyncDieselConnectionManager::new_with_config(&settings.url, config);
    let max_lifetime = settings.max_lifetime;
    DeadPool::builder(manager)
        .max_size(settings.max_size.max(PoolSettings::MIN_SIZE))
        .timeouts(Timeouts {
            wait: Some(settings.wait_timeout),
            create: Some(settings.connect_timeout + Duration::from_secs(1)),
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
                    conn.batch_execute("SELECT 1").await.map_err(|e| {
                        HookError::message(format!("idle connection failed its check: {e}"))
                    })?;
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
