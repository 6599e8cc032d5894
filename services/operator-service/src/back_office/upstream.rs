//! The services that keep the loyalty back office's data, as it reaches them: the point
//! service (offers, occasions, the expiry policy, clients' points) and the order service
//! (gift-code batches, the earn-rate table). The operator routes over that data are relayed,
//! once the operator's token and role are checked here, to the keeper's
//! `/internal/v1/back-office` routes with this service's own credential, made for that one
//! request (its method, path, query and body) and vouching for the operator (id and role),
//! whom the keeper records in the change's audit row. Its answers pass on unchanged: a success
//! (with its content type: a CSV stays a CSV), or a refusal in the operator API's shape (the
//! keepers answer the back office's refusals so). A keeper that is busy (503) is answered
//! as the operator service's own busy database is, 503, which the panel may retry. Anything
//! else (its own failures, a refused credential) is no answer for the admin panel: it is
//! logged and answered as the keeper failing. No handler holds a database connection while it waits here.

use std::time::Duration;

use actix_web::HttpResponse;
use actix_web::http::StatusCode;
use actix_web::web::Bytes;
use serde_json::Value;
use service_identity::{Signer, Vouched};

use back_office::routes::Keeper;

use crate::auth::Operator;
use crate::error::OpError;

/// How long the back office waits for a keeper by default (`BACK_OFFICE_TIMEOUT_MS`).
pub const WAIT: Duration = Duration::from_secs(10);

envelope::refusals! {
    /// Why a back-office route has no answer from the service that keeps its data
    /// (`service`: `point service` or `order service`).
    pub enum UpstreamRefusal in Operator {
        /// `POINT_SERVICE_URL` or `ORDER_SERVICE_URL` unset.
        NotConfigured(name: &'static str, service: &'static str) => 500,
            "{name} is not set: the loyalty back office cannot reach the {service}";
        /// Refused connection, broken answer.
        Unreachable(service: &'static str) => 502, "the {service} could not be reached";
        /// An answer that is neither a success nor a refusal of the back office's.
        Failed(service: &'static str, status: u16) => 502, "the {service} failed ({status})";
        /// The change may still be made: read it back before sending it again (an
        /// adjustment or a batch again with its reference is safe).
        TimedOut(service: &'static str) => 504,
            "the {service} did not answer in time: the change may have been made, \
             read it back before sending it again";
    }
}

/// Where a keeper is and how to call it; unset parts answer `NotConfigured`.
#[derive(Clone)]
pub struct Upstream {
    pub keeper: Keeper,
    pub url: Option<String>,
    /// Signs each call: this service's credential, for the one request.
    pub signer: std::sync::Arc<Signer>,
    pub http: Option<telemetry::client::HttpClient>,
    /// How long the client keeps an unused connection (`HTTP_CALLER_IDLE_SECS`).
    pub idle: Duration,
    /// How long a call waits for the keeper (`BACK_OFFICE_TIMEOUT_MS`).
    pub wait: Duration,
}

impl Upstream {
    /// A copy with an HTTP client of the calling worker's own
    /// (`telemetry::client::http_client` says why).
    pub fn for_worker(&self) -> Upstream {
        let mut link = self.clone();
        let service = self.keeper.name();
        link.http = telemetry::client::http_client(self.wait, self.idle)
            .inspect_err(
                |e| tracing::error!(error.message = %e, "no HTTP client for the {service}"),
            )
            .ok();
        link
    }

    /// Sends `method` to `{<KEEPER>_URL}/internal/v1/back-office{path}`, naming `operator`
    /// (for a change) and carrying `body`; answers the keeper's answer.
    pub async fn relay(
        &self,
        method: reqwest::Method,
        path: &str,
        operator: Option<&Operator>,
        body: Option<Bytes>,
    ) -> Result<HttpResponse, OpError> {
        let service = self.keeper.name();
        let url = self.url.as_deref().ok_or(UpstreamRefusal::NotConfigured(
            self.keeper.url_variable(),
            service,
        ))?;
        let http = self
            .http
            .as_ref()
            .ok_or(UpstreamRefusal::Unreachable(service))?;
        // The credential names the request as it goes out: the URL as parsed (and so
        // percent-encoded) is the one sent.
        let mut target =
            reqwest::Url::parse(&format!("{url}{}{path}", back_office::INTERNAL_PREFIX)).map_err(
                |e| {
                    tracing::error!(error.message = %e, "{service} call has no URL");
                    UpstreamRefusal::Unreachable(service)
                },
            )?;
        // An empty query (`?` alone) goes out as none, as it is named.
        if target.query() == Some("") {
            target.set_query(None);
        }
        let sent = match target.query() {
            Some(query) => format!("{}?{query}", target.path()),
            None => target.path().to_owned(),
        };
        let vouched = operator.map(|operator| Vouched {
            id: operator.id.clone(),
            role: operator.role.as_str().to_owned(),
        });
        let (callee, _) = self.keeper.service();
        let sent_body = body.as_deref().unwrap_or_default();
        let authorization = self
            .signer
            .vouch(callee, vouched, method.as_str(), &sent, sent_body);
        let mut request = http
            .request(method, target)
            .header(reqwest::header::AUTHORIZATION, authorization);
        if let Some(body) = body {
            request = request
                .header("content-type", "application/json")
                .body(body.to_vec());
        }
        let answer = request.send().await.map_err(|e| {
            let timed_out = matches!(&e, reqwest_middleware::Error::Reqwest(e) if e.is_timeout());
            tracing::warn!(error.message = %telemetry::client::error_chain(&e), "{service} call failed");
            if timed_out {
                UpstreamRefusal::TimedOut(service)
            } else {
                UpstreamRefusal::Unreachable(service)
            }
        })?;
        let status = StatusCode::from_u16(answer.status().as_u16())
            .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let content_type = answer
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .filter(|_| status.is_success())
            .unwrap_or("application/json")
            .to_owned();
        // What says how to keep the answer: a file's name, and that vouchers are not cached.
        let kept: Vec<(reqwest::header::HeaderName, String)> = [
            reqwest::header::CONTENT_DISPOSITION,
            reqwest::header::CACHE_CONTROL,
        ]
        .into_iter()
        .filter_map(|name| {
            let value = answer.headers().get(&name)?.to_str().ok()?.to_owned();
            Some((name, value))
        })
        .collect();
        let body = answer.bytes().await.map_err(|e| {
            tracing::warn!(error.message = %e.without_url(), "{service} answer broken");
            UpstreamRefusal::Unreachable(service)
        })?;
        if status.is_success() || is_back_office_refusal(status, &body) {
            let mut answer = HttpResponse::build(status);
            answer.content_type(content_type);
            for (name, value) in kept {
                answer.insert_header((name.as_str(), value));
            }
            return Ok(answer.body(body));
        }
        if status == StatusCode::SERVICE_UNAVAILABLE {
            // The keeper's database is busy (its pool, a deadlock): ours to say as our own
            // busy answer, which the panel may send again, as every operator route's 503.
            return Err(OpError::Busy(format!("the {service} is busy")));
        }
        tracing::error!(
            http.upstream_status = status.as_u16(),
            upstream.body = %String::from_utf8_lossy(&body[..body.len().min(300)]),
            "{service} failed a back-office call"
        );
        Err(UpstreamRefusal::Failed(service, status.as_u16()).into())
    }
}

/// A 4xx in the operator API's shape, with its own status: a refusal of the back office's.
/// Never a 401 or 403: the admin panel's token was checked here, so those say that our
/// service credential was refused, which is ours to fix, not the panel's.
fn is_back_office_refusal(status: StatusCode, body: &[u8]) -> bool {
    let Ok(Value::Object(answer)) = serde_json::from_slice::<Value>(body) else {
        return false;
    };
    status.is_client_error()
        && status != StatusCode::UNAUTHORIZED
        && status != StatusCode::FORBIDDEN
        && answer.get("statusCode").and_then(Value::as_u64) == Some(u64::from(status.as_u16()))
        && answer.get("message").is_some_and(Value::is_string)
        && answer.get("error").is_some_and(Value::is_string)
}
