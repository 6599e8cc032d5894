//! The point service as the loyalty back office reaches it: the operator routes over points
//! data (`back_office`) are relayed, once the operator's token and role are checked here,
//! to its `/internal/v1/back-office` routes with the internal token and the operator's id
//! and role, which it records in the change's audit row. Its answers pass on unchanged: a
//! success, or a refusal in the operator API's shape (the point service answers the back
//! office's refusals so). Anything else (its own failures, a wrong internal token) is no
//! answer for the admin panel: it is logged and answered as the point service failing.
//! No handler holds a database connection while it waits here.

use std::time::Duration;

use actix_web::HttpResponse;
use actix_web::http::StatusCode;
use actix_web::web::Bytes;
use serde_json::Value;
use server::Secret;

use crate::auth::Operator;
use crate::error::OpError;

/// How long the back office waits for the point service.
pub const TIMEOUT: Duration = Duration::from_secs(10);

envelope::refusals! {
    /// Why a back-office route has no answer from the point service.
    pub enum PointServiceRefusal in Operator {
        /// `POINT_SERVICE_URL` or `INTERNAL_API_TOKEN` unset.
        NotConfigured(name: &'static str) => 500,
            "{name} is not set: the loyalty back office cannot reach the point service";
        /// Refused connection, broken answer.
        Unreachable => 502, "the point service could not be reached";
        /// An answer that is neither a success nor a refusal of the back office's.
        Failed(status: u16) => 502, "the point service failed ({status})";
        /// The change may still be made: read it back before sending it again (an
        /// adjustment again with its reference is safe).
        TimedOut => 504,
            "the point service did not answer in time: the change may have been made, \
             read it back before sending it again";
    }
}

/// Where the point service is and how to call it; unset parts answer `NotConfigured`.
#[derive(Clone)]
pub struct PointService {
    pub url: Option<String>,
    pub token: Option<Secret>,
    pub http: Option<telemetry::client::HttpClient>,
}

impl PointService {
    /// A copy with an HTTP client of the calling worker's own
    /// (`telemetry::client::http_client` says why).
    pub fn for_worker(&self) -> PointService {
        let mut link = self.clone();
        link.http = telemetry::client::http_client(TIMEOUT)
            .inspect_err(
                |e| tracing::error!(error.message = %e, "no HTTP client for the point service"),
            )
            .ok();
        link
    }

    /// Sends `method` to `{POINT_SERVICE_URL}/internal/v1/back-office{path}`, naming
    /// `operator` (for a change) and carrying `body`; answers the point service's answer.
    pub async fn relay(
        &self,
        method: reqwest::Method,
        path: &str,
        operator: Option<&Operator>,
        body: Option<Bytes>,
    ) -> Result<HttpResponse, OpError> {
        let url = self
            .url
            .as_deref()
            .ok_or(PointServiceRefusal::NotConfigured("POINT_SERVICE_URL"))?;
        let token = self
            .token
            .as_ref()
            .ok_or(PointServiceRefusal::NotConfigured("INTERNAL_API_TOKEN"))?;
        let http = self.http.as_ref().ok_or(PointServiceRefusal::Unreachable)?;
        let mut request = http
            .request(
                method,
                format!("{url}{}{path}", back_office::INTERNAL_PREFIX),
            )
            .header("x-internal-token", token.expose());
        if let Some(operator) = operator {
            request = request
                .header(back_office::OPERATOR_ID_HEADER, &operator.id)
                .header(back_office::OPERATOR_ROLE_HEADER, operator.role.as_str());
        }
        if let Some(body) = body {
            request = request
                .header("content-type", "application/json")
                .body(body.to_vec());
        }
        let answer = request.send().await.map_err(|e| {
            let timed_out = matches!(&e, reqwest_middleware::Error::Reqwest(e) if e.is_timeout());
            tracing::warn!(error.message = %telemetry::client::error_chain(&e), "point service call failed");
            if timed_out {
                PointServiceRefusal::TimedOut
            } else {
                PointServiceRefusal::Unreachable
            }
        })?;
        let status = StatusCode::from_u16(answer.status().as_u16())
            .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let body = answer.bytes().await.map_err(|e| {
            tracing::warn!(error.message = %e.without_url(), "point service answer broken");
            PointServiceRefusal::Unreachable
        })?;
        if status.is_success() || is_back_office_refusal(status, &body) {
            return Ok(HttpResponse::build(status)
                .content_type("application/json")
                .body(body));
        }
        tracing::error!(
            http.upstream_status = status.as_u16(),
            upstream.body = %String::from_utf8_lossy(&body[..body.len().min(300)]),
            "point service failed a back-office call"
        );
        Err(PointServiceRefusal::Failed(status.as_u16()).into())
    }
}

/// A 4xx in the operator API's shape, with its own status: a refusal of the back office's.
/// Never a 401 or 403: the admin panel's token was checked here, so those say that our
/// internal token is wrong, which is ours to fix, not the panel's.
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
