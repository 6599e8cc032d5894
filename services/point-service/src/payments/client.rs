//! The payment service (docs/design.md's contract). Amounts go out in halalas. A 4xx answer
//! of a pay call is passed through to the app; a transport failure, a timeout or a 5xx is
//! a 500. The read-back routes (a payment by id, the payments of a reference, a day's
//! settlement) serve the sync and the settlement check, which never fail an order on them.
//!
//! Every call is counted in `payment_service_requests_total{route, outcome}` (outcome
//! `2xx`, `4xx`, `5xx`, `timeout`, `unreachable`), so that a gateway outage shows as the
//! gateway's, not as our own 500s.

use std::time::Instant;

use actix_web::web::Bytes;
use chrono::NaiveDate;
use serde::{Deserialize, Serialize};

use crate::error::PointError;

/// The payment provider an order records (`payment_provider`) when it is paid through this
/// client, by a pay route or by the payment sync.
pub const PROVIDER: &str = "payment-service";

/// Calls to the payment service, by [`Route`] and outcome.
pub const REQUESTS: &str = "payment_service_requests_total";
/// How long a call took, by [`Route`].
pub const DURATION: &str = "payment_service_request_duration_seconds";

/// A route of the payment service: the `route` label of [`REQUESTS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    CreatePayment,
    CreateSession,
    ReadPayment,
    PaymentsByReference,
    Settlement,
}

impl Route {
    pub const ALL: [Route; 5] = [
        Route::CreatePayment,
        Route::CreateSession,
        Route::ReadPayment,
        Route::PaymentsByReference,
        Route::Settlement,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Route::CreatePayment => "create_payment",
            Route::CreateSession => "create_session",
            Route::ReadPayment => "read_payment",
            Route::PaymentsByReference => "payments_by_reference",
            Route::Settlement => "settlement",
        }
    }
}

/// The outcomes of [`REQUESTS`], exported at zero.
pub const OUTCOMES: [&str; 5] = ["2xx", "4xx", "5xx", "timeout", "unreachable"];

/// The request counter at zero for every route and outcome, so that a rate of failures is
/// a rate from the first scrape (`telemetry::metrics::counters_at_zero` says why).
pub fn export_counters() {
    for route in Route::ALL {
        for outcome in OUTCOMES {
            metrics::counter!(REQUESTS, "route" => route.as_str(), "outcome" => outcome)
                .increment(0);
        }
    }
}

#[derive(Clone)]
pub struct PaymentClient {
    base: Option<String>,
    http: telemetry::client::HttpClient,
}

/// A pay call's body: the order's reference, amount and payer, then how it is paid.
#[derive(Serialize)]
pub struct PaymentRequest {
    pub reference: String,
    pub amount_minor: i64,
    pub currency: &'static str,
    pub customer_id: i64,
    #[serde(flatten)]
    pub method: PayMethod,
}

/// How an order is paid: its keys follow the order's in the pay call's body.
#[derive(Serialize)]
#[serde(untagged)]
pub enum PayMethod {
    /// `POST /v1/payments` with a saved card.
    Card { source: CardSource },
    /// `POST /v1/payment-sessions`.
    Session { remember_me: bool },
}

#[derive(Serialize)]
pub struct CardSource {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub card_id: String,
    /// Forwarded only; never stored, never logged.
    pub cvv: String,
}

/// A 2xx answer of the payment service, passed on as it came.
pub struct Accepted {
    pub content_type: Option<String>,
    pub body: Bytes,
    pub json: serde_json::Value,
}

impl PaymentClient {
    pub fn new(base: Option<String>, http: telemetry::client::HttpClient) -> Self {
        Self { base, http }
    }

    /// The same client over another HTTP client.
    pub fn with_http(&self, http: telemetry::client::HttpClient) -> Self {
        Self {
            base: self.base.clone(),
            http,
        }
    }

    pub fn is_configured(&self) -> bool {
        self.base.is_some()
    }

    /// Starts the payment `request` describes: a card payment or a payment session.
    pub async fn pay(&self, request: &PaymentRequest) -> Result<Accepted, PointError> {
        let (route, path) = match request.method {
            PayMethod::Card { .. } => (Route::CreatePayment, "/v1/payments"),
            PayMethod::Session { .. } => (Route::CreateSession, "/v1/payment-sessions"),
        };
        self.post(route, path, request).await
    }

    fn base(&self) -> Result<&str, Unconfigured> {
        self.base.as_deref().ok_or(Unconfigured)
    }

    /// Sends `request`, counts it under `route` and reads the whole answer.
    async fn send(
        &self,
        route: Route,
        request: reqwest_middleware::RequestBuilder,
    ) -> Result<Answer, telemetry::client::CallError> {
        let started = Instant::now();
        let result = async {
            let response = request.send().await?;
            let status = response.status().as_u16();
            let content_type = response
                .headers()
                .get("content-type")
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            let body = response.bytes().await?;
            Ok(Answer {
                status,
                content_type,
                body,
            })
        }
        .await;
        let outcome = match &result {
            Ok(answer) => match answer.status {
                200..=299 => "2xx",
                400..=499 => "4xx",
                _ => "5xx",
            },
            Err(e) if is_timeout(e) => "timeout",
            Err(_) => "unreachable",
        };
        metrics::counter!(REQUESTS, "route" => route.as_str(), "outcome" => outcome).increment(1);
        metrics::histogram!(DURATION, "route" => route.as_str())
            .record(started.elapsed().as_secs_f64());
        result
    }

    async fn post<T: Serialize>(
        &self,
        route: Route,
        path: &str,
        body: &T,
    ) -> Result<Accepted, PointError> {
        let base = self
            .base()
            .map_err(|_| PointError::Internal("PAYMENT_SERVICE_URL not set".into()))?;
        let answer = self
            .send(route, self.http.post(format!("{base}{path}")).json(body))
            .await
            .map_err(|e| {
                if never_sent(&e) {
                    let e = telemetry::client::without_url(e);
                    PointError::PaymentNotSent(format!("payment service unreachable: {e}"))
                } else {
                    crate::clients::unreachable("payment service")(e)
                }
            })?;
        match answer.status {
            200..=299 => {
                let json = serde_json::from_slice(&answer.body).unwrap_or(serde_json::Value::Null);
                Ok(Accepted {
                    content_type: answer.content_type,
                    body: answer.body,
                    json,
                })
            }
            400..=499 => Err(PointError::PaymentRefused {
                status: answer.status,
                content_type: answer.content_type,
                body: answer.body,
            }),
            status => Err(PointError::Internal(format!(
                "payment service answered {status}"
            ))),
        }
    }

    /// A read-back route's answer as `T`; `None` for a 404 when `missing_is_none`.
    async fn read<T: serde::de::DeserializeOwned>(
        &self,
        route: Route,
        url: url::Url,
        missing_is_none: bool,
    ) -> Result<Option<T>, ReadError> {
        let answer = self.send(route, self.http.get(url)).await.map_err(|e| {
            if is_timeout(&e) {
                ReadError::Timeout
            } else {
                ReadError::Unreachable(telemetry::client::error_chain(&e))
            }
        })?;
        match answer.status {
            200..=299 => serde_json::from_slice(&answer.body)
                .map(Some)
                .map_err(|e| ReadError::Unreadable(e.to_string())),
            404 if missing_is_none => Ok(None),
            status => Err(ReadError::Status(status)),
        }
    }

    /// `base` with `segments` appended to its path, each percent-encoded (a payment id is
    /// the gateway's text: a `/` or `?` in it stays inside its segment).
    fn url(&self, segments: &[&str]) -> Result<url::Url, ReadError> {
        let base = self.base().map_err(|_| ReadError::Unconfigured)?;
        let mut url = url::Url::parse(base).map_err(|e| ReadError::Unreachable(e.to_string()))?;
        url.path_segments_mut()
            .map_err(|()| ReadError::Unreachable("PAYMENT_SERVICE_URL cannot take a path".into()))?
            .pop_if_empty()
            .extend(segments);
        Ok(url)
    }

    /// `GET /v1/payments/{id}`: the payment, or `None` when the payment service knows no
    /// such id.
    pub async fn payment(&self, id: &str) -> Result<Option<ReadPayment>, ReadError> {
        let url = self.url(&["v1", "payments", id])?;
        self.read(Route::ReadPayment, url, true).await
    }

    /// `GET /v1/payments?reference=&cursor=`: the payments made for the reference, one page
    /// (the contract answers them all at once; a gateway that pages them says `next`, as its
    /// settlements do).
    pub async fn payments_for(
        &self,
        reference: &str,
        cursor: Option<&str>,
    ) -> Result<PaymentList, ReadError> {
        let mut url = self.url(&["v1", "payments"])?;
        url.query_pairs_mut().append_pair("reference", reference);
        if let Some(cursor) = cursor {
            url.query_pairs_mut().append_pair("cursor", cursor);
        }
        let list: Option<PaymentList> = self.read(Route::PaymentsByReference, url, false).await?;
        list.ok_or(ReadError::Status(404))
    }

    /// `GET /v1/settlements/<day>?cursor=`: one page of the payments captured that UTC day.
    pub async fn settlement_page(
        &self,
        day: NaiveDate,
        cursor: Option<&str>,
    ) -> Result<SettlementPage, ReadError> {
        let mut url = self.url(&["v1", "settlements", &day.format("%Y-%m-%d").to_string()])?;
        if let Some(cursor) = cursor {
            url.query_pairs_mut().append_pair("cursor", cursor);
        }
        let page: Option<SettlementPage> = self.read(Route::Settlement, url, false).await?;
        page.ok_or(ReadError::Status(404))
    }
}

/// `PAYMENT_SERVICE_URL` is not set.
struct Unconfigured;

/// A whole answer of the payment service.
struct Answer {
    status: u16,
    content_type: Option<String>,
    body: Bytes,
}

/// A call that ended without an answer because the client's own deadline passed.
fn is_timeout(e: &telemetry::client::CallError) -> bool {
    match e {
        reqwest_middleware::Error::Reqwest(e) => e.is_timeout(),
        reqwest_middleware::Error::Middleware(_) => false,
    }
}

/// A call that failed before any byte of it was sent: no connection could be made (refused,
/// unresolvable, a connect timeout). The payment service cannot have acted on it.
fn never_sent(e: &telemetry::client::CallError) -> bool {
    match e {
        reqwest_middleware::Error::Reqwest(e) => e.is_connect(),
        reqwest_middleware::Error::Middleware(_) => false,
    }
}

/// Why a read-back brought nothing usable. None of these says anything about the payment:
/// the sync tries again later, the settlement check concludes nothing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReadError {
    #[error("PAYMENT_SERVICE_URL not set")]
    Unconfigured,
    #[error("the payment service did not answer in time")]
    Timeout,
    #[error("the payment service could not be reached: {0}")]
    Unreachable(String),
    #[error("the payment service answered {0}")]
    Status(u16),
    #[error("the payment service's answer could not be read: {0}")]
    Unreadable(String),
}

/// Where a payment stands at the payment service.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReadStatus {
    Pending,
    Captured,
    Declined,
    /// A status this contract does not name (refunded, voided…): decides nothing here.
    #[serde(other)]
    Other,
}

/// A payment as the payment service reads it back.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct ReadPayment {
    pub id: String,
    pub reference: String,
    pub status: ReadStatus,
    pub amount_minor: i64,
    pub currency: String,
}

/// One page of a reference's payments; `next` is the cursor of the next page, `None` (or
/// absent) at the end.
#[derive(Debug, Deserialize)]
pub struct PaymentList {
    pub data: Vec<ReadPayment>,
    #[serde(default)]
    pub next: Option<String>,
}

/// A payment the payment service captured on the settlement's day.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Settled {
    pub id: String,
    pub reference: String,
    pub amount_minor: i64,
    pub currency: String,
    pub captured_at: chrono::DateTime<chrono::Utc>,
}

/// One page of a day's settlement; `next` is the cursor of the next page, `None` at the end.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct SettlementPage {
    pub data: Vec<Settled>,
    pub next: Option<String>,
}
