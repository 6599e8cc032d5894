//! The relay's open connections to the point service, one set per actix worker (a connection
//! is driven by a task of the runtime that opened it).
//!
//! hyper speaks HTTP on each connection (`hyper::client::conn::http1`); what is kept here is
//! only which connections are idle. Not hyper-util's pooled client: it keys its pool by
//! scheme and host behind a lock, and hands a connection back by spawning a task per request
//! that waits for the answer's body to end. The relay calls one host from one thread, so a
//! connection goes back here when the relayed body ends ([`Connection::give_back`]) and is
//! used again only if it is ready when next taken. `docs/decisions.md`, "order-service", has
//! the measurements.
//!
//! The rules the pooled client kept: a connection idle for longer than `idle`
//! (`HTTP_CALLER_IDLE_SECS`) is never used again, and is closed within `idle` more ([`sweep`]),
//! so the point service's keep-alive always outlasts the relay's; one the point service
//! closed is dropped when it is next looked at; the most recently used goes first, so that
//! the older ones age out under light load.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, Weak};
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
    /// A lock no one waits on: one worker's requests run on one thread.
    waiting: Mutex<Waiting>,
}

#[derive(Default)]
struct Waiting {
    /// Idle connections, the most recently used last.
    idle: VecDeque<Idle>,
    /// Whether a [`sweep`] task is running for them.
    swept: bool,
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
            waiting: Mutex::default(),
        })
    }

    /// An idle connection ready for a request, or a new one.
    pub async fn take(self: &Arc<Self>) -> Result<Connection, ConnectError> {
        match self.pop_ready() {
            Some(sender) => Ok(self.taken(sender)),
            None => self.fresh().await,
        }
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

    /// The most recently used idle connection that may still be used and is ready now. One
    /// that is not ready is closed rather than waited for: hyper makes a connection ready
    /// as soon as its last answer has been read and its request written, so one that is not
    /// (its request's body still unwritten, the point service having answered early) may
    /// never be.
    fn pop_ready(&self) -> Option<SendRequest<Body>> {
        let mut waiting = self.lock();
        while let Some(idle) = waiting.idle.pop_back() {
            if idle.since.elapsed() >= self.idle {
                // Every connection under it has waited longer still.
                waiting.idle.clear();
                return None;
            }
            if idle.sender.is_ready() {
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

    fn give_back(self: &Arc<Self>, sender: SendRequest<Body>) {
        let mut waiting = self.lock();
        self.drop_stale(&mut waiting.idle);
        waiting.idle.push_back(Idle {
            sender,
            since: Instant::now(),
        });
        if !waiting.swept {
            waiting.swept = true;
            tokio::spawn(sweep(Arc::downgrade(self), self.idle));
        }
    }

    /// Closes the oldest connections while they have been idle too long (or were closed).
    fn drop_stale(&self, idle: &mut VecDeque<Idle>) {
        while idle
            .front()
            .is_some_and(|oldest| oldest.since.elapsed() >= self.idle || oldest.sender.is_closed())
        {
            idle.pop_front();
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Waiting> {
        // Nothing here can panic while holding it; a poisoned list is still a list.
        self.waiting.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Closes idle connections once they have been idle too long, even when no request comes to
/// find them: a stopping point service ends its drain early only once every caller has
/// closed its idle connections ("Lossless rollouts" in `docs/decisions.md`). Runs every
/// `idle` while any connection is idle, so none outlives it by more than that; ends when
/// none is left (the next one given back starts it again) or the worker's state is gone.
async fn sweep(connections: Weak<Connections>, every: Duration) {
    loop {
        tokio::time::sleep(every).await;
        let Some(connections) = connections.upgrade() else {
            return;
        };
        let mut waiting = connections.lock();
        connections.drop_stale(&mut waiting.idle);
        if waiting.idle.is_empty() {
            waiting.swept = false;
            return;
        }
    }
}

impl Connection {
    /// Back to the idle connections, its answer read whole.
    pub fn give_back(self) {
        self.home.give_back(self.sender);
    }
}
