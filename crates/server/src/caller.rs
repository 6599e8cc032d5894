//! Who is calling a point route (or the gift-card route): the auth service's
//! `GET /api/v1/users` with the caller's own `Authorization` header. The client id comes
//! from that answer only, never from the request.
//!
//! A service on a hot path may keep the answers for a few seconds ([`CallerLookup::with_cache`]):
//! the app sends several point requests per screen with the same token, and each lookup is
//! an HTTP call and two statements on the auth database. What that risks, and its bounds:
//! a client deactivated (or a legacy token deleted) keeps access to its own points on this
//! replica for at most the TTL after its last successful lookup; only successful lookups are
//! kept, so a token is never refused from the cache, and at most [`CACHED_CALLERS`] tokens
//! are held.
//!
//! A handler takes its caller as an extractor, [`Caller`], which finds the service's
//! [`CallerLookup`] in the app data.

use std::fmt;
use std::marker::PhantomData;
use std::time::Duration;

use actix_web::dev::Payload;
use actix_web::http::header::AUTHORIZATION;
use actix_web::{FromRequest, HttpRequest, ResponseError, web};
use futures_util::future::LocalBoxFuture;
use serde_json::Value;

/// Why the caller could not be resolved; each service answers it in its own envelope.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CallerError {
    #[error("Missing or invalid authorization header")]
    MissingHeader,
    #[error("Invalid or expired token")]
    InvalidToken,
    /// An outage looks like a bad token (401), with the error text.
    #[error("auth service unreachable: {0}")]
    Unreachable(String),
    #[error("auth response missing numeric client id")]
    MissingClientId,
    /// A 500, not a 401: the service is misconfigured.
    #[error("AUTH_SERVICE_URL not set")]
    NotConfigured,
}

/// The 401s of [`CallerError`] as the documents describe them (each envelope's answer set),
/// made from the variants themselves so that each message is written once.
pub fn unauthorized_answer() -> String {
    let unreachable = CallerError::Unreachable("<error text>".to_owned());
    format!(
        "`{}`, `{}`, `{unreachable}` or `{}`",
        CallerError::MissingHeader,
        CallerError::InvalidToken,
        CallerError::MissingClientId
    )
}

/// The 500 of a route that resolves its caller: the database, or the caller lookup not
/// configured ([`CallerError::NotConfigured`]).
pub fn internal_answer() -> String {
    format!(
        "`{}`, or `{}`",
        envelope::INTERNAL_MESSAGE,
        CallerError::NotConfigured
    )
}

/// A request's `Authorization` header as text; `None` when absent or not visible ASCII.
pub fn authorization(req: &HttpRequest) -> Option<&str> {
    req.headers()
        .get(AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
}

/// The cache's bound, in tokens (a few MB at most).
pub const CACHED_CALLERS: u64 = 10_000;

/// How one lookup at the auth service ended: the `outcome` of
/// `caller_lookups_total` ([`crate::ops_metrics::CALLER_LOOKUPS`]). Every one but `ok` answers
/// the app 401; only `refused` says something about the token, the others are the auth
/// service failing (the caller-lookup alert watches them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LookupOutcome {
    /// A numeric client id came back.
    Ok,
    /// A 4xx (or another non-2xx, non-5xx answer): the token is not a client's.
    Refused,
    /// A 5xx: the auth service failed.
    ServerError,
    /// No answer within the client's timeout.
    Timeout,
    /// No connection, or the exchange broke off.
    Unreachable,
    /// A 2xx without a numeric client id.
    Unreadable,
}

impl LookupOutcome {
    pub const ALL: [LookupOutcome; 6] = [
        LookupOutcome::Ok,
        LookupOutcome::Refused,
        LookupOutcome::ServerError,
        LookupOutcome::Timeout,
        LookupOutcome::Unreachable,
        LookupOutcome::Unreadable,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            LookupOutcome::Ok => "ok",
            LookupOutcome::Refused => "refused",
            LookupOutcome::ServerError => "5xx",
            LookupOutcome::Timeout => "timeout",
            LookupOutcome::Unreachable => "unreachable",
            LookupOutcome::Unreadable => "unreadable",
        }
    }

    fn count(self) {
        metrics::counter!(crate::ops_metrics::CALLER_LOOKUPS, "outcome" => self.as_str())
            .increment(1);
    }
}

#[derive(Clone)]
pub struct CallerLookup {
    base: Option<String>,
    http: telemetry::client::HttpClient,
    /// Client ids by `Authorization` header, successful lookups only.
    cache: Option<moka::future::Cache<String, i64>>,
}

impl CallerLookup {
    /// `base` is `AUTH_SERVICE_URL`; without it every lookup is [`CallerError::NotConfigured`].
    /// The lookups' counter is exported at zero from here, in the processes that look callers
    /// up (`telemetry::metrics::counters_at_zero` says why).
    pub fn new(base: Option<String>, http: telemetry::client::HttpClient) -> Self {
        telemetry::metrics::counters_at_zero(
            crate::ops_metrics::CALLER_LOOKUPS,
            "outcome",
            &LookupOutcome::ALL.map(LookupOutcome::as_str),
        );
        Self {
            base,
            http,
            cache: None,
        }
    }

    /// Keeps each successful lookup for `ttl` (none when zero); see the module's notes.
    pub fn with_cache(mut self, ttl: Duration) -> Self {
        self.cache = (!ttl.is_zero()).then(|| {
            moka::future::Cache::builder()
                .max_capacity(CACHED_CALLERS)
                .time_to_live(ttl)
                .build()
        });
        self
    }

    /// The same lookup (and the same cache) over another HTTP client: see
    /// `telemetry::client::http_client` on why each worker has a client of its own.
    pub fn with_http(&self, http: telemetry::client::HttpClient) -> Self {
        Self {
            http,
            ..self.clone()
        }
    }

    /// The caller's client id. The header is checked before the configuration, so a request
    /// without a token is a 401 even on a misconfigured service.
    pub async fn caller(&self, authorization: Option<&str>) -> Result<i64, CallerError> {
        let authorization = authorization
            .filter(|h| h.starts_with("Bearer "))
            .ok_or(CallerError::MissingHeader)?;
        let base = self.base.as_deref().ok_or(CallerError::NotConfigured)?;
        match &self.cache {
            // Concurrent first requests with one token share one lookup; errors are not kept.
            Some(cache) => cache
                .try_get_with_by_ref(authorization, self.lookup(base, authorization))
                .await
                .map_err(|e| (*e).clone()),
            None => self.lookup(base, authorization).await,
        }
    }

    /// The caller of `req`, by its own `Authorization` header (see [`CallerLookup::caller`]).
    pub async fn of_request(&self, req: &HttpRequest) -> Result<i64, CallerError> {
        self.caller(authorization(req)).await
    }

    /// One lookup at the auth service, counted by its outcome.
    async fn lookup(&self, base: &str, authorization: &str) -> Result<i64, CallerError> {
        let (outcome, result) = self.ask(base, authorization).await;
        outcome.count();
        result
    }

    async fn ask(
        &self,
        base: &str,
        authorization: &str,
    ) -> (LookupOutcome, Result<i64, CallerError>) {
        let sent = self
            .http
            .get(format!("{base}/api/v1/users"))
            .header("authorization", authorization)
            // A lookup changes nothing: safe to send again (`telemetry::closed_connections`).
            .with_extension(telemetry::closed_connections::Resendable)
            .send()
            .await;
        let response = match sent {
            Ok(response) => response,
            Err(e) => {
                let outcome = if e.is_timeout() {
                    LookupOutcome::Timeout
                } else {
                    LookupOutcome::Unreachable
                };
                let error = telemetry::client::without_url(e).to_string();
                return (outcome, Err(CallerError::Unreachable(error)));
            }
        };
        // The app's answer is the same 401 either way (the spec's); the count tells the auth
        // service's failure from a refused token.
        if response.status().is_server_error() {
            return (LookupOutcome::ServerError, Err(CallerError::InvalidToken));
        }
        if !response.status().is_success() {
            return (LookupOutcome::Refused, Err(CallerError::InvalidToken));
        }
        match response.json::<Value>().await {
            Ok(body) => match numeric_id(&body["data"]["client_id"]) {
                Some(id) => (LookupOutcome::Ok, Ok(id)),
                None => (LookupOutcome::Unreadable, Err(CallerError::MissingClientId)),
            },
            // The body did not arrive in time: counted as the timeout it is, answered as before.
            Err(e) if e.is_timeout() => (LookupOutcome::Timeout, Err(CallerError::MissingClientId)),
            Err(_) => (LookupOutcome::Unreadable, Err(CallerError::MissingClientId)),
        }
    }
}

/// The caller of a route, resolved by the service's [`CallerLookup`]
/// ([`CallerLookup::of_request`], with its cache and its `caller_lookups_total` count) before
/// the handler runs. A caller that cannot be resolved gets the service's own answer for the
/// [`CallerError`], in the service's envelope: `E` is the service's error type.
///
/// The lookup is found in the app data as a `web::Data<CallerLookup>`, registered by the
/// service's `data` closure (once per worker, over the worker's own HTTP client):
///
/// ```ignore
/// server::serve(listener, &config.common, pool, routes::app(), move |cfg| {
///     let state = with_worker_clients(&state);
///     cfg.app_data(web::Data::new(state.caller.clone()));
///     cfg.app_data(web::Data::new(state));
/// })
/// ```
///
/// and a handler takes it in place of `state.auth.caller(&req).await?`:
///
/// ```ignore
/// pub async fn balance(caller: Caller<PointError>, state: web::Data<AppState>) -> ... {
///     let client_id = caller.client_id;
/// ```
///
/// actix resolves a handler's extractors together, and the first to fail answers: put
/// `caller` first, so that a request without a token is refused before anything else is
/// looked at (an extractor that can fail, polled while the lookup waits on the auth service,
/// would still answer before it).
///
/// Without a registered lookup every request is a [`CallerError::NotConfigured`] (a 500,
/// logged): a service that forgot to register it fails its first test, never lets a caller
/// through.
pub struct Caller<E> {
    /// The caller's client id, from the auth service's answer only.
    pub client_id: i64,
    answers_in: PhantomData<fn() -> E>,
}

impl<E> fmt::Debug for Caller<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Caller")
            .field("client_id", &self.client_id)
            .finish()
    }
}

impl<E> FromRequest for Caller<E>
where
    E: From<CallerError> + ResponseError + 'static,
{
    type Error = E;
    type Future = LocalBoxFuture<'static, Result<Self, E>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let req = req.clone();
        Box::pin(async move {
            let client_id = match req.app_data::<web::Data<CallerLookup>>() {
                Some(lookup) => lookup.of_request(&req).await,
                None => {
                    tracing::error!(
                        "no CallerLookup in the app data: register web::Data<CallerLookup>"
                    );
                    Err(CallerError::NotConfigured)
                }
            };
            let client_id = client_id.map_err(E::from)?;
            Ok(Caller {
                client_id,
                answers_in: PhantomData,
            })
        })
    }
}

/// A positive integer id, as a JSON number or numeric text.
fn numeric_id(value: &Value) -> Option<i64> {
    let id = match value {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    };
    id.filter(|id| *id > 0)
}

#[cfg(test)]
mod tests {
    use super::numeric_id;
    use serde_json::json;

    #[test]
    fn ids_are_positive_integers_as_numbers_or_text() {
        assert_eq!(numeric_id(&json!(1001)), Some(1001));
        assert_eq!(numeric_id(&json!("1001")), Some(1001));
        for bad in [
            json!(null),
            json!("abc"),
            json!(0),
            json!(-1),
            json!(1.5),
            json!({}),
        ] {
            assert_eq!(numeric_id(&bad), None, "{bad}");
        }
    }
}
