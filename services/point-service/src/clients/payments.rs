//! The payment service (docs/design.md's contract). Amounts go out in halalas. A 4xx answer is
//! passed through to the app; a transport failure, a timeout or a 5xx is a 500.

use actix_web::web::Bytes;
use serde::Serialize;

use crate::error::PointError;

#[derive(Clone)]
pub struct PaymentClient {
    base: Option<String>,
    http: telemetry::client::HttpClient,
}

#[derive(Serialize)]
pub struct CardSource<'a> {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub card_id: &'a str,
    /// Forwarded only; never stored, never logged.
    pub cvv: &'a str,
}

#[derive(Serialize)]
pub struct PaymentRequest<'a> {
    pub reference: String,
    pub amount_minor: i64,
    pub currency: &'static str,
    pub customer_id: i64,
    pub source: CardSource<'a>,
}

#[derive(Serialize)]
pub struct SessionRequest {
    pub reference: String,
    pub amount_minor: i64,
    pub currency: &'static str,
    pub customer_id: i64,
    pub remember_me: bool,
}

/// The payment service's answer to a card payment, which the card route passes on as it
/// came (a description of the payment service's contract for the document; never read).
#[derive(utoipa::ToSchema)]
#[allow(dead_code)]
pub struct PaymentStarted {
    id: String,
    status: String,
    redirect_url: String,
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

    pub async fn pay(&self, request: &PaymentRequest<'_>) -> Result<Accepted, PointError> {
        self.post("/v1/payments", request).await
    }

    pub async fn session(&self, request: &SessionRequest) -> Result<Accepted, PointError> {
        self.post("/v1/payment-sessions", request).await
    }

    async fn post<T: Serialize>(&self, path: &str, body: &T) -> Result<Accepted, PointError> {
        let base = self
            .base
            .as_deref()
            .ok_or_else(|| PointError::Internal("PAYMENT_SERVICE_URL not set".into()))?;
        let response = self
            .http
            .post(format!("{base}{path}"))
            .json(body)
            .send()
            .await
            .map_err(super::unreachable("payment service"))?;
        let status = response.status().as_u16();
        let content_type = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let body = response.bytes().await.map_err(|e| {
            let e = e.without_url();
            PointError::Internal(format!("payment service answer unreadable: {e}"))
        })?;
        match status {
            200..=299 => {
                let json = serde_json::from_slice(&body).unwrap_or(serde_json::Value::Null);
                Ok(Accepted {
                    content_type,
                    body,
                    json,
                })
            }
            400..=499 => Err(PointError::PaymentRefused {
                status,
                content_type,
                body,
            }),
            _ => Err(PointError::Internal(format!(
                "payment service answered {status}"
            ))),
        }
    }
}
