//! Opening one connection, the one way the pool and the command-line tools both use.
//!
//! tokio-postgres tries the hosts of a multi-host URL in order, and its `connect_timeout`
//! bounds only the TCP handshake: a first host that accepts TCP but never answers (a frozen
//! PostgreSQL, an old primary that is stopped but not gone) holds the connection attempt
//! forever, and the promoted standby after it is never reached. So each host is tried here
//! with its own deadline ([`PoolSettings::connect_timeout`]) over the whole start (TCP,
//! startup, authentication, the `target_session_attrs` check), and the
//! host that worked last is tried first, so that after a failover only the first new
//! connection pays for the dead host.
//!
//! The socket gets TCP keepalives and `TCP_USER_TIMEOUT`, so that a connection to a host
//! that vanished (powered off, cut off: nothing acknowledges) fails within seconds instead
//! of the kernel's default of about 15 minutes; and a [`ReplyDeadline`], for a server whose
//! kernel still acknowledges but whose process answers nothing.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use diesel::ConnectionError;
use diesel::connection::CacheSize;
use diesel::result::{DatabaseErrorKind, Error as DieselError};
use diesel_async::{AsyncConnection, AsyncPgConnection};
use socket2::{SockRef, TcpKeepalive};
use tokio::net::TcpStream;
use tokio_postgres::config::{Host, TargetSessionAttrs};

use crate::PoolSettings;
use crate::reply_deadline::ReplyDeadline;

/// An idle connection is probed after this long without traffic, then every
/// [`KEEPALIVE_INTERVAL`], and given up after [`KEEPALIVE_RETRIES`] probes unanswered.
pub const KEEPALIVE_IDLE: Duration = Duration::from_secs(10);
pub const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(3);
pub const KEEPALIVE_RETRIES: u32 = 3;
/// Data sent and not acknowledged for this long fails the connection (Linux's
/// `TCP_USER_TIMEOUT`); a live server's kernel acknowledges within milliseconds.
pub const TCP_USER_TIMEOUT: Duration = Duration::from_secs(10);

/// Opens connections to the database of [`PoolSettings::url`], remembering which host
/// answered last.
#[derive(Clone)]
pub struct Connector {
    config: tokio_postgres::Config,
    hosts: Vec<(String, u16)>,
    settings: PoolSettings,
    /// The index in `hosts` of the host that gave the last connection.
    preferred: Arc<AtomicUsize>,
}

impl Connector {
    pub fn new(settings: &PoolSettings) -> Result<Self, ConnectionError> {
        let mut config: tokio_postgres::Config = settings
            .url
            .parse()
            .map_err(|e| ConnectionError::InvalidConnectionUrl(format!("{e}")))?;
        // The timeouts travel in the startup packet rather than as a `SET` once connected
        // (PoolSettings::startup_options), after any `options` the URL gives.
        let options = match config.get_options() {
            Some(own) if !own.trim().is_empty() => {
                format!("{own} {}", settings.startup_options())
            }
            _ => settings.startup_options(),
        };
        config.options(options);
        let ports = config.get_ports();
        let hosts = config
            .get_hosts()
            .iter()
            .enumerate()
            .map(|(i, host)| match host {
                Host::Tcp(name) => Ok((
                    name.clone(),
                    ports.get(i).or(ports.first()).copied().unwrap_or(5432),
                )),
                #[cfg(unix)]
                Host::Unix(_) => Err(ConnectionError::InvalidConnectionUrl(
                    "a Unix socket is not supported: name a TCP host".into(),
                )),
            })
            .collect::<Result<Vec<_>, _>>()?;
        if hosts.is_empty() {
            return Err(ConnectionError::InvalidConnectionUrl(
                "the URL names no host".into(),
            ));
        }
        Ok(Self {
            config,
            hosts,
            settings: settings.clone(),
            preferred: Arc::new(AtomicUsize::new(0)),
        })
    }

    /// How many hosts the URL names: the longest a connection can take is that many
    /// connect timeouts.
    pub fn host_count(&self) -> usize {
        self.hosts.len()
    }

    /// A connection to the first host, starting with the one that worked last, that
    /// answers within the connect timeout (and accepts writes, with
    /// `target_session_attrs=read-write`). The error is the last host's.
    ///
    /// The connection's setup (diesel-async's time zone and encoding, which PgBouncer keeps
    /// per client) runs after the host is chosen, outside its deadline: behind a pooler it
    /// waits for a server connection like any query, and the pooler's own
    /// `query_wait_timeout` answer (busy) must reach the caller rather than a timeout of ours.
    /// The timeouts need no statement: they came with the startup packet.
    pub async fn connect(&self) -> Result<AsyncPgConnection, ConnectionError> {
        let client = self.open().await?;
        let mut conn = AsyncPgConnection::try_from(client).await?;
        if !self.settings.statement_cache {
            conn.set_prepared_statement_cache_size(CacheSize::Disabled);
        }
        conn.set_instrumentation(crate::sql_spans::SqlSpans::default());
        Ok(conn)
    }

    async fn open(&self) -> Result<tokio_postgres::Client, ConnectionError> {
        let first = self.preferred.load(Ordering::Relaxed) % self.hosts.len();
        let mut last = None;
        for i in (0..self.hosts.len()).map(|k| (first + k) % self.hosts.len()) {
            let (host, port) = &self.hosts[i];
            let attempt = self.open_host(host, *port);
            match tokio::time::timeout(self.settings.connect_timeout, attempt).await {
                Ok(Ok(client)) => {
                    self.preferred.store(i, Ordering::Relaxed);
                    return Ok(client);
                }
                Ok(Err(e)) => {
                    tracing::warn!(
                        db.host = %host,
                        db.port = port,
                        error.message = %e,
                        "database host refused a connection"
                    );
                    last = Some(e);
                }
                Err(_) => {
                    let e = ConnectionError::BadConnection(format!(
                        "{host}:{port} did not answer within {} ms",
                        self.settings.connect_timeout.as_millis()
                    ));
                    tracing::warn!(db.host = %host, db.port = port, error.message = %e, "database host timed out");
                    last = Some(e);
                }
            }
        }
        Err(last.unwrap_or_else(|| ConnectionError::BadConnection("no host".into())))
    }

    /// TCP, startup, login and the `target_session_attrs` check on one host.
    async fn open_host(
        &self,
        host: &str,
        port: u16,
    ) -> Result<tokio_postgres::Client, ConnectionError> {
        let tcp = TcpStream::connect((host, port))
            .await
            .map_err(|e| ConnectionError::BadConnection(format!("{host}:{port}: {e}")))?;
        let socket_error = |e: std::io::Error| ConnectionError::BadConnection(e.to_string());
        tcp.set_nodelay(true).map_err(socket_error)?;
        let socket = SockRef::from(&tcp);
        socket
            .set_tcp_keepalive(
                &TcpKeepalive::new()
                    .with_time(KEEPALIVE_IDLE)
                    .with_interval(KEEPALIVE_INTERVAL)
                    .with_retries(KEEPALIVE_RETRIES),
            )
            .map_err(socket_error)?;
        socket
            .set_tcp_user_timeout(Some(TCP_USER_TIMEOUT))
            .map_err(socket_error)?;
        let stream = ReplyDeadline::new(tcp, self.settings.reply_timeout());
        let (client, connection) = self
            .config
            .connect_raw(stream, tokio_postgres::NoTls)
            .await
            .map_err(server_error)?;
        // The connection's I/O runs on its own task until the client is dropped or the
        // server goes away; the client then reports itself closed and the pool drops it.
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!(error.message = %e, "database connection ended");
            }
        });
        let wanted = self.config.get_target_session_attrs();
        if wanted != TargetSessionAttrs::Any {
            let read_only = client
                .simple_query("SHOW transaction_read_only")
                .await
                .map_err(server_error)?
                .into_iter()
                .find_map(|m| match m {
                    tokio_postgres::SimpleQueryMessage::Row(row) => row.get(0).map(|v| v == "on"),
                    _ => None,
                });
            let fits = match wanted {
                TargetSessionAttrs::ReadWrite => read_only == Some(false),
                TargetSessionAttrs::ReadOnly => read_only == Some(true),
                _ => true,
            };
            if !fits {
                return Err(ConnectionError::BadConnection(format!(
                    "{host}:{port} does not fit target_session_attrs ({wanted:?})"
                )));
            }
        }
        Ok(client)
    }
}

/// One connection to the database of `settings` (the command-line tools' way in; the pool
/// keeps a [`Connector`]).
pub async fn connect(settings: &PoolSettings) -> Result<AsyncPgConnection, ConnectionError> {
    Connector::new(settings)?.connect().await
}

/// A server's refusal keeps its message, so that [`crate::Failure`] can tell a busy pooler
/// (`query_wait_timeout`) or a starting server from the rest.
fn server_error(e: tokio_postgres::Error) -> ConnectionError {
    match e.as_db_error() {
        Some(db) => ConnectionError::CouldntSetupConfiguration(DieselError::DatabaseError(
            DatabaseErrorKind::Unknown,
            Box::new(db.message().to_owned()),
        )),
        None => ConnectionError::BadConnection(e.to_string()),
    }
}
