//! The point service as the relay calls it: hyper over plain HTTP/1.1, with the request
//! target built from the bytes the app sent. Not reqwest: reqwest takes every target through
//! `url::Url`, which for `http` URLs reads `\` as `/` and removes dot segments, so
//! `/api/v2/client/point-offers/..\..\..\..\metrics` went out as `/metrics`.

use std::sync::Arc;
use std::time::Duration;

use actix_web::web::Bytes;
use http::header::{HOST, HeaderValue};
use http::uri::{Authority, PathAndQuery, Scheme, Uri};
use http_body_util::Full;
use hyper::body::Incoming;

use super::connections::{ConnectError, Connection, Connections};

/// The request body: the whole body the app sent (read and checked before the handler).
pub type Body = Full<Bytes>;

/// Why a request got no answer head from the point service (the relay's 502 shows it).
#[derive(Debug, thiserror::Error)]
pub enum SendError {
    #[error("client error (Connect)")]
    Connect(#[from] ConnectError),
    #[error("client error (SendRequest)")]
    Send(#[from] hyper::Error),
}

/// Where the relay sends requests, over the worker's own connections.
#[derive(Clone)]
pub struct Upstream {
    authority: Authority,
    /// The `Host` header: the request target goes out in origin form (`/path?query`).
    host: HeaderValue,
    connect_timeout: Duration,
    /// How long an unused connection is kept (`HTTP_CALLER_IDLE_SECS`).
    idle: Duration,
    connections: Arc<Connections>,
}

impl Upstream {
    /// `base` is `POINT_SERVICE_URL`: `http://host[:port]`, nothing after the authority but an
    /// optional `/` (a base path would have to be joined with the app's target, which is
    /// exactly the rewriting the relay must not do).
    pub fn new(base: &str, connect_timeout: Duration, idle: Duration) -> Result<Self, String> {
        let authority = authority(base)?;
        let host = HeaderValue::from_str(&host(&authority))
            .map_err(|e| format!("POINT_SERVICE_URL={base:?} is invalid: {e}"))?;
        Ok(Self {
            connections: connections(&authority, connect_timeout, idle),
            authority,
            host,
            connect_timeout,
            idle,
        })
    }

    /// The point service's host, as the metrics of calls between services name a callee.
    pub fn host(&self) -> &str {
        self.authority.host()
    }

    /// Whether `base` can be the relay's `POINT_SERVICE_URL` (the configuration's check).
    pub fn check(base: &str) -> Result<(), String> {
        authority(base).map(drop)
    }

    /// The same upstream with connections of its own, for one actix worker: a connection is
    /// driven by the runtime that opened it (`telemetry::client::http_client`).
    pub fn for_worker(&self) -> Self {
        Self {
            connections: connections(&self.authority, self.connect_timeout, self.idle),
            ..self.clone()
        }
    }

    /// The request target for `sent`, the target (path and query) as the app sent it, in
    /// origin form, or `None` when hyper would not write it back byte for byte. hyper writes
    /// an origin-form target as the URI's path, then `?` and its query; `http::uri` reads an
    /// empty path as `/` and drops a `#` and what follows, so only a target that starts with
    /// `/` and that `http::uri` keeps whole comes out as it went in. The bytes are copied
    /// once (actix's URI and hyper's are types of two versions of the `http` crate).
    pub fn target(sent: &str) -> Option<Uri> {
        if !sent.starts_with('/') {
            return None;
        }
        let kept = PathAndQuery::from_maybe_shared(Bytes::copy_from_slice(sent.as_bytes())).ok()?;
        let written = kept.path().len() + kept.query().map_or(0, |q| q.len() + 1);
        if written != sent.len() {
            return None;
        }
        Some(Uri::from(kept))
    }

    /// Sends `request` on an idle connection or a new one. The connection comes back with
    /// the answer: give it back once the answer's body has been read whole.
    ///
    /// An idle connection the point service closed just as it was taken fails before a byte
    /// of the request is written; hyper then hands the request back, and it goes once more on
    /// a new connection (as hyper-util's pooled client does). A request that may have been
    /// written is never sent again: it may be an order (`telemetry::closed_connections`).
    pub async fn send(
        &self,
        mut request: hyper::Request<Body>,
    ) -> Result<(hyper::Response<Incoming>, Connection), SendError> {
        request.headers_mut().insert(HOST, self.host.clone());
        let mut connection = self.connections.take().await?;
        match connection.sender.try_send_request(request).await {
            Ok(answer) => Ok((answer, connection)),
            Err(mut e) => match e.take_message() {
                Some(unsent) => {
                    let mut connection = self.connections.fresh().await?;
                    let answer = connection.sender.send_request(unsent).await?;
                    Ok((answer, connection))
                }
                None => Err(e.into_error().into()),
            },
        }
    }
}

/// The authority of `base`, which must be `http://host[:port]` with nothing after it but an
/// optional `/`: the app's target is sent as it came, never joined to a base path.
fn authority(base: &str) -> Result<Authority, String> {
    let invalid = |why: &str| format!("POINT_SERVICE_URL={base:?} is invalid: {why}");
    let uri: Uri = base
        .parse()
        .map_err(|e| invalid(&format!("not a URL ({e})")))?;
    if uri.scheme() != Some(&Scheme::HTTP) {
        return Err(invalid(
            "expected http://host[:port] (the relay speaks plain HTTP to the point service inside the cluster)",
        ));
    }
    if !matches!(uri.path(), "" | "/") || uri.query().is_some() {
        return Err(invalid("expected http://host[:port] with no path or query"));
    }
    uri.authority()
        .filter(|a| !a.as_str().contains('@'))
        .cloned()
        .ok_or_else(|| invalid("expected http://host[:port]"))
}

/// The `Host` header for `authority`, written as hyper's client writes it: the host, and the
/// port as a number unless it is HTTP's default (`point-service:80` → `point-service`,
/// `point-service:08083` → `point-service:8083`).
fn host(authority: &Authority) -> String {
    match authority.port_u16() {
        Some(port) if port != 80 => format!("{}:{port}", authority.host()),
        _ => authority.host().to_owned(),
    }
}

/// The connections to `authority`: its host and port (80 when it names none).
fn connections(
    authority: &Authority,
    connect_timeout: Duration,
    idle: Duration,
) -> Arc<Connections> {
    let address = format!(
        "{}:{}",
        authority.host(),
        authority.port_u16().unwrap_or(80)
    );
    Connections::new(address, connect_timeout, idle)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::Upstream;

    #[test]
    fn a_target_goes_out_byte_for_byte() {
        for sent in [
            r"/api/v2/client/point-offers/..\..\..\..\metrics",
            "/api/v2/client/point-offers/%2e%2e%2f%2E%2e/%5c?x=..&y=%2f#",
            "/api/v2/client/points?",
            "/api/v2/client/points;a=\"{b}\"?q={}|^",
        ] {
            let sent = sent.trim_end_matches('#');
            let uri = Upstream::target(sent).unwrap();
            assert_eq!(uri.to_string(), sent);
        }
    }

    #[test]
    fn a_target_that_would_change_is_not_relayed() {
        for sent in [
            "?x=1",
            "",
            "*",
            "/points#frag",
            "/points?a#b",
            "/a b",
            "/a\\\u{1}",
        ] {
            assert!(Upstream::target(sent).is_none(), "{sent:?}");
        }
    }

    #[test]
    fn the_host_header_is_the_one_hyper_would_write() {
        for (base, host) in [
            ("http://point-service:8083", "point-service:8083"),
            ("http://point-service:80", "point-service"),
            ("http://point-service", "point-service"),
            ("http://point-service:", "point-service"),
            ("http://point-service:08083/", "point-service:8083"),
            ("http://[::1]:8083", "[::1]:8083"),
        ] {
            let upstream =
                Upstream::new(base, Duration::from_secs(1), Duration::from_secs(10)).unwrap();
            assert_eq!(upstream.host, host, "{base}");
        }
    }

    #[test]
    fn only_a_plain_http_authority_is_an_upstream() {
        assert!(
            Upstream::new(
                "http://127.0.0.1:8083/",
                Duration::from_secs(1),
                Duration::from_secs(10)
            )
            .is_ok()
        );
        for base in [
            "https://point-service:8083",
            "http://point-service:8083/prefix",
            "http://user:pw@point-service:8083",
            "http://point-service:8083?x",
            "point-service:8083",
        ] {
            assert!(
                Upstream::new(base, Duration::from_secs(1), Duration::from_secs(10)).is_err(),
                "{base}"
            );
        }
    }
}
