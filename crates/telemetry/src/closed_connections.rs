//! Calls that met a connection the other side closed before its answer came, counted by
//! callee, and resent once when that cannot double an effect.
//!
//! Over HTTP/1.1 such a call may or may not have been read by the callee. A stopping service
//! of ours never closes a connection a caller may still send on (`server::stopping`), so
//! between our services this should not happen at all; what does happen is counted, and the
//! alert `InternalCallsMetClosedConnections` fires on any that failed. A call is resent only
//! when its caller marks it [`Resendable`]: sending it twice does what sending it once does
//! (a caller or profile lookup, a credit by its reference: the point service applies it once
//! per reference, and the legacy side is sent the reference as its `Idempotency-Key` and gets
//! the same credit again from the retry task anyway). A read is not resendable by its method
//! alone: some keepers record who read what (the back office's reads). Anything else fails as
//! it did, and its caller does what it does on a failed call (the relay's 502, the credit's
//! later retry).
//!
//! Every client made by `crate::client::http_client` counts, external callees (the payment
//! service, the SMS provider, the legacy credit) included; a service exports the series at 0
//! from its start for the services of ours it calls ([`expect_calls_to`]). The resend's budget
//! is the client's timeout: none of the calls marked today sets a shorter one of its own.

use std::time::{Duration, Instant};

use http::Extensions;
use reqwest::{Request, Response};
use reqwest_middleware::{Middleware, Next, Result};

/// Every such call, by `callee` (the host called) and `outcome`: `resent` (sent once more,
/// and answered) or `failed` (not resendable, or failed again).
pub const CLOSED_CONNECTIONS: &str = "http_client_closed_connections_total";

/// Marks a call that may be sent twice (`RequestBuilder::with_extension`): the callee does
/// for two copies what it does for one, so it may be resent when its connection closed
/// under it.
#[derive(Debug, Clone, Copy)]
pub struct Resendable;

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

/// Exports the series of calls to the host of `url` at 0 for both outcomes, before the first
/// such call: a counter that first appears at 1 shows no increase to Prometheus, and the alert
/// would miss the first failure (`crate::metrics::counters_at_zero`). A service calls it at
/// start for each service it calls.
pub fn expect_calls_to(url: &str) {
    crate::metrics::handle();
    if let Some(host) = reqwest::Url::parse(url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_owned))
    {
        for outcome in [Outcome::Resent, Outcome::Failed] {
            metrics::counter!(CLOSED_CONNECTIONS, "callee" => host.clone(), "outcome" => outcome.as_str())
                .increment(0);
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

/// The least of a call's time that must be left for a resend to be worth sending.
const MIN_LEFT_TO_RESEND: Duration = Duration::from_millis(200);

/// The middleware: a call that met a closing connection is resent once if it may be, within
/// what is left of the client's `timeout`, and counted either way.
pub(crate) struct ResendOnce {
    pub(crate) timeout: Duration,
}

impl ResendOnce {
    fn copy(req: &Request, extensions: &Extensions) -> Option<Request> {
        extensions.get::<Resendable>().and_then(|_| req.try_clone())
    }
}

/// The callee's host when `result` failed on a closing connection. Read from the error (the
/// middleware runs inside the one that takes URLs off errors), so that a call that did not
/// fail costs nothing here.
fn closed_under(result: &Result<Response>) -> Option<String> {
    match result {
        Err(reqwest_middleware::Error::Reqwest(e)) if met_closing_connection(e) => Some(
            e.url()
                .and_then(|u| u.host_str())
                .unwrap_or_default()
                .to_owned(),
        ),
        _ => None,
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
        let first = next.clone().run(req, extensions).await;
        let Some(callee) = closed_under(&first) else {
            return first;
        };
        let left = self.timeout.saturating_sub(started.elapsed());
        match again {
            // Not with less left than a call between services takes: it would only time out.
            Some(mut again) if left >= MIN_LEFT_TO_RESEND => {
                tracing::warn!(
                    callee,
                    "the connection closed under a call that may be sent twice; sent it again"
                );
                *again.timeout_mut() = Some(left);
                let second = next.run(again, extensions).await;
                let outcome = if second.is_ok() {
                    Outcome::Resent
                } else {
                    Outcome::Failed
                };
                count(&callee, outcome);
                second
            }
            _ => {
                count(&callee, Outcome::Failed);
                first
            }
        }
    }
}
