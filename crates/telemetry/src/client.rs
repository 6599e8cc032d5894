//! The outgoing HTTP client. Every call gets a client span and the W3C `traceparent` /
//! `tracestate` headers of the current trace.

use std::time::Duration;

use reqwest_middleware::{ClientBuilder, ClientWithMiddleware};
use reqwest_tracing::TracingMiddleware;

pub type HttpClient = ClientWithMiddleware;

/// One pooled client per upstream; `timeout` bounds each whole call.
///
/// A service builds one per actix worker (in its app factory), not one for the process:
/// each worker is a single-threaded runtime, and a pooled connection is driven by the
/// runtime that opened it, so a shared client sends one worker's calls through another
/// worker's thread, where they wait behind that worker's requests.
pub fn http_client(timeout: Duration) -> Result<HttpClient, reqwest::Error> {
    let inner = reqwest::Client::builder()
        .timeout(timeout)
        .connect_timeout(timeout.min(Duration::from_secs(3)))
        .pool_idle_timeout(Duration::from_secs(60))
        .build()?;
    Ok(ClientBuilder::new(inner)
        .with(TracingMiddleware::default())
        .build())
}
