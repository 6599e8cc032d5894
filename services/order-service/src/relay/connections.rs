//! The relay's open connections to the point service, one set per actix worker (a connection
//! is driven by a task of the runtime that opened it).
//!
//! hyper speaks HTTP on each connection (`hyper::client::conn::http1`); what is kept here is
//! only which connections are idle. Not hyper-util's pooled client: it keys its pool by
//! scheme and host behind a lock, and hands a connection back by spawning a task per request
//! that waits for the answer's body to end. The relay calls one host from one thread, so a
//! connection goes back here when the relayed body ends ([`Connection::give_back`]) and is
//! awaited ready when it is next taken. `docs/decisions.md`, "The relay's connections", has
//! the measurements.
//!
//! The rules the pooled client kept: a connection idle for longer than `idle`
//! (`HTTP_CALLER_IDLE_SECS`) is never used again, so the point service's keep-alive always
//! outlasts the relay's; one the point service closed is dropped when it is next looked at;
//! the most recently used goes first, so that the older ones age out under light load.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hyper::client::conn::http1::{self, SendRequest};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

use super::upstream::Body;

/// Why no connection could be had; the relay's 502 shows it (with its causes).
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    #[error("tcp connect error")]
    Tcp(#[source] std::io::Error),
    #[error("tcp connect timed out")]
    TimedOut,
    #[error("connection error")]
    Handshake(#[source] hyper::Error),
}

/// One worker's connections to `address`.
pub struct Connections {
    /// `host:port`, resolved on each connect (a Service's name in the cluster).
    address: String,
    connect_timeout: Duration,
    idle: Duration,
    /// Idle connections, the most recently used last. A lock no one waits on: one worker's
    /// requests run on one thread.
    waiting: Mutex<VecDeque<Idle>>,
}

struct Idle {
    sender: SendRequest<Body>,
    since: Instant,
}

/// A connection taken for one request; [`Connection::give_back`] returns it once the answer
/// has been read whole. Dropped instead (an error, an answer cut short), it closes.
pub struct Connection {
    pub sender: SendRequest<Body>,
    home: Arc<Connections>,
}

impl Connections {
    pub fn new(address: String, connect_timeout: Duration, idle: Duration) -> Arc<Self> {
        Arc::new(Self {
            address,
            connect_timeout,
            idle,
            waiting: Mutex::new(VecDeque::new()),
        })
    }

    /// An idle connection ready for a request, or a new one.
    pub async fn take(self: &Arc<Self>) -> Result<Connection, ConnectError> {
        while let Some(mut sender) = self.pop_fresh() {
            // Ready once its last answer is done; an error means it is closing.
            if sender.ready().await.is_ok() {
                return Ok(self.taken(sender));
            }
        }
        self.fresh().await
    }

    /// A new connection, whatever is idle.
    pub async fn fresh(self: &Arc<Self>) -> Result<Connection, ConnectError> {
        self.connect().await.map(|sender| self.taken(sender))
    }

    fn taken(self: &Arc<Self>, sender: SendRequest<Body>) -> Connection {
        Connection {
            sender,
            home: Arc::clone(self),
        }
    }

    /// The most recently used idle connection that may still be used.
    fn pop_fresh(&self) -> Option<SendRequest<Body>> {
        let mut waiting = self.lock();
        while let Some(idle) = waiting.pop_back() {
            if idle.since.elapsed() >= self.idle {
                // Every connection under it has waited longer still.
                waiting.clear();
                return None;
            }
            if !idle.sender.is_closed() {
                return Some(idle.sender);
            }
        }
        None
    }

    async fn connect(&self) -> Result<SendRequest<Body>, ConnectError> {
        let stream = tokio::time::timeout(self.connect_timeout, TcpStream::connect(&self.address))
            .await
            .map_err(|_| ConnectError::TimedOut)?
            .map_err(ConnectError::Tcp)?;
        // Small requests and answers: do not let Nagle's algorithm hold them back.
        stream.set_nodelay(true).map_err(ConnectError::Tcp)?;
        let (sender, connection) = http1::handshake(TokioIo::new(stream))
            .await
            .map_err(ConnectError::Handshake)?;
        tokio::spawn(async move {
            // Its error, if any, is the request's too, which the relay reports.
            let _ = connection.await;
        });
        Ok(sender)
    }

    fn give_back(&self, sender: SendRequest<Body>) {
        let mut waiting = self.lock();
        // The oldest connection ages out here when nothing takes it any more.
        if waiting
            .front()
            .is_some_and(|oldest| oldest.since.elapsed() >= self.idle || oldest.sender.is_closed())
        {
            waiting.pop_front();
        }
        waiting.push_back(Idle {
            sender,
            since: Instant::now(),
        });
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<Idle>> {
        // Nothing here can panic while holding it; a poisoned list is still a list.
        self.waiting.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Connection {
    /// Back to the idle connections, its answer read whole.
    pub fn give_back(self) {
        self.home.give_back(self.sender);
    }
}
