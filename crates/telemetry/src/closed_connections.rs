//! Calls that met a connection the other side closed before its answer came, counted by
//! callee, and resent once when that cannot double an effect.
//!
//! Over HTTP/1.1 such a call may or may not have been read by the callee. A stopping service
//! of ours never closes a connection a caller may still send on (`server::stopping`), so
//! between our services this should not happen at all; what does happen is counted, and the
//! alert `InternalCallsMetClosedConnections` fires on any that failed. A call is resent only
//! when sending it twice does what sending it once does: a read (`GET`, `HEAD`), or a call
//! its caller marks [`IdempotentByKey`] (a credit by its reference). Anything else fails as it
//! did, and its caller answers with its usual refusal (502/504).

use std::time::{Duration, Instant};

use http::Extensions;
use reqwest::{Method, Request, Response};
use reqwest_middleware::{Middleware, Next, Result};

/// Every such call, by `callee` (the host called) and `outcome`: `resent` or `failed`.
pub const CLOSED_CONNECTIONS: &str = "http_client_closed_connections_total";

/// Marks a call that is idempotent by a key of its own (`RequestBuilder::with_extension`),
/// so that it may be resent when its connection closed under it.
#[derive(Debug, Clone, Copy)]
pub struct IdempotentByKey;

/// What happened to a call that met a closing connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Resent,
    Failed,
}

impl Outcome {
    fn as_str(self) -> &'static str {
        match self {
            Self::Resent => "resent",
            Self::Failed => "failed",
        }
    }
}

/// Counts one call to `callee` that met a closing connection.
pub fn count(callee: &str, outcome: Outcome) {
    metrics::counter!(CLOSED_CONNECTIONS, "callee" => callee.to_owned(), "outcome" => outcome.as_str())
        .increment(1);
}

/// Whether `e` (or a cause of it) says the connection closed before the whole answer came:
/// hyper's "connection closed before message completed", or a reset or broken pipe.
pub fn met_closing_connection(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut cause = Some(e);
    while let Some(c) = cause {
        if let Some(h) = c.downcast_ref::<hyper::Error>()
            && h.is_incomplete_message()
        {
            return true;
        }
        if let Some(io) = c.downcast_ref::<std::io::Error>()
            && matches!(
                io.kind(),
                std::io::ErrorKind::ConnectionReset | std::io::ErrorKind::BrokenPipe
            )
        {
            return true;
        }
        cause = c.source();
    }
    false
}

/// The middleware: a call that met a closing connection is resent once if it may be, within
/// what is left of the client's `timeout`, and counted either way.
pub(crate) struct ResendOnce {
    pub(crate) timeout: Duration,
}

impl ResendOnce {
    fn copy(req: &Request, extensions: &Extensions) -> Option<Request> {
        let may = matches!(*req.method(), Method::GET | Method::HEAD)
            || extensions.get::<IdempotentByKey>().is_some();
        if may { req.try_clone() } else { None }
    }
}

#[async_trait::async_trait]
impl Middleware for ResendOnce {
    async fn handle(
        &self,
        req: Request,
        extensions: &mut Extensions,
        next: Next<'_>,
    ) -> Result<Response> {
        let started = Instant::now();
        let again = Self::copy(&req, extensions);
        let callee = req.url().host_str().unwrap_or_default().to_owned();
        let first = next.clone().run(req, extensions).await;
        let closed = match &first {
            Err(reqwest_middleware::Error::Reqwest(e)) => met_closing_connection(e),
            _ => false,
        };
        if !closed {
            return first;
        }
        let left = self.timeout.saturating_sub(started.elapsed());
        match again {
            Some(mut again) if !left.is_zero() => {
                count(&callee, Outcome::Resent);
                tracing::warn!(
                    callee,
                    "the connection closed under a call that may be sent twice; sent it again"
                );
                *again.timeout_mut() = Some(left);
                next.run(again, extensions).await
            }
            _ => {
                count(&callee, Outcome::Failed);
                first
            }
        }
    }
}
