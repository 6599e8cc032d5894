//! The outgoing HTTP client. Every call gets a client span (when spans are exported) and
//! the W3C `traceparent` / `tracestate` headers of the current trace, and no error of a call names its URL.
//!
//! reqwest's errors print the URL they were sending to ("error sending request for url
//! (https://sms.example/send?key=…)"), and a URL may carry a credential in its query (an
//! SMS provider's API key). Every client made here takes the URL off each error before the
//! caller, or the tracing span (which records the error's text), sees it; callers that
//! turn a reqwest error into text still use [`without_url`] on their own, so that the rule
//! does not depend on which client made the error.

use std::time::Duration;

use reqwest_middleware::{ClientBuilder, ClientWithMiddleware, Next};
use reqwest_tracing::TracingMiddleware;

pub type HttpClient = ClientWithMiddleware;

/// How long an unused connection stays in a client's pool unless the service says otherwise
/// (`HTTP_CALLER_IDLE_SECS`, `server::config::HttpLimits`).
pub const DEFAULT_IDLE: Duration = Duration::from_secs(4);

/// What a call through an [`HttpClient`] fails with.
pub type CallError = reqwest_middleware::Error;

/// One pooled client per upstream; `timeout` bounds each whole call, a resend included, and
/// `idle` is how long an unused connection stays in the pool (`HTTP_CALLER_IDLE_SECS`: a
/// stopping service keeps serving for longer than that, `server::stopping`).
///
/// A service builds one per actix worker (in its app factory), not one for the process:
/// each worker is a single-threaded runtime, and a pooled connection is driven by the
/// runtime that opened it, so a shared client sends one worker's calls through another
/// worker's thread, where they wait behind that worker's requests.
pub fn http_client(timeout: Duration, idle: Duration) -> Result<HttpClient, reqwest::Error> {
    let inner = reqwest::Client::builder()
        .timeout(timeout)
        .connect_timeout(timeout.min(Duration::from_secs(3)))
        .pool_idle_timeout(idle)
        .build()?;
    // `strip_urls` inside the tracing span's middleware: the span records the error without
    // its URL. The resend innermost: it reads the callee's host off an error.
    Ok(ClientBuilder::new(inner)
        .with(TracingMiddleware::default())
        .with(propagate)
        .with(strip_urls)
        .with(crate::closed_connections::ResendOnce { timeout })
        .build())
}

/// The error with its URL taken off (a middleware's own error has none to take).
pub fn without_url(e: reqwest_middleware::Error) -> reqwest_middleware::Error {
    match e {
        reqwest_middleware::Error::Reqwest(e) => {
            reqwest_middleware::Error::Reqwest(e.without_url())
        }
        other => other,
    }
}

type Answer<'a> = std::pin::Pin<
    Box<dyn Future<Output = reqwest_middleware::Result<reqwest::Response>> + Send + 'a>,
>;

/// Without an exporter, `TracingMiddleware` has no client span to take a context from: the
/// call carries the request's own (`crate::trace_context`).
fn propagate<'a>(
    mut req: reqwest::Request,
    extensions: &'a mut http::Extensions,
    next: Next<'a>,
) -> Answer<'a> {
    if !crate::trace_context::exporting() {
        crate::trace_context::inject(&opentelemetry::Context::current(), req.headers_mut());
    }
    next.run(req, extensions)
}

/// The middleware that applies [`without_url`] to every failed call.
fn strip_urls<'a>(
    req: reqwest::Request,
    extensions: &'a mut http::Extensions,
    next: Next<'a>,
) -> Answer<'a> {
    Box::pin(async move { next.run(req, extensions).await.map_err(without_url) })
}

/// An outbound call's error and its causes on one line, so that a log says "connection
/// refused" or "operation timed out" rather than only "error sending request". Give it an
/// error that names no URL (hyper's, or one through [`without_url`]).
pub fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}
