//! The signed webhook the payment service sends to the point service (docs/design.md):
//! `X-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`.

use std::time::Duration;

use hmac::{Hmac, KeyInit, Mac};
use serde_json::json;
use sha2::Sha256;

use crate::payments::{Payment, Status};

/// What the point service answered to one delivery.
#[derive(Debug)]
pub struct Delivered {
    pub status: u16,
    pub body: String,
}

impl Delivered {
    /// The point service took the event (2xx).
    pub fn taken(&self) -> bool {
        (200..300).contains(&self.status)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum DeliveryError {
    #[error("the point service could not be reached: {0}")]
    Unreachable(String),
}

/// Sends a settled payment's event to the point service.
#[derive(Clone)]
pub struct Sender {
    url: String,
    secret: String,
    http: telemetry::client::HttpClient,
}

/// `X-Signature` for `body` at `timestamp`.
pub fn signature(secret: &str, timestamp: i64, body: &str) -> String {
    // HMAC accepts keys of any length, so this cannot fail.
    let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(secret.as_bytes())
        .unwrap_or_else(|_| unreachable!("HMAC takes any key length"));
    mac.update(format!("{timestamp}.{body}").as_bytes());
    format!(
        "t={timestamp},v1={}",
        hex::encode(mac.finalize().into_bytes())
    )
}

/// The event of a settled payment. Its id is derived from the payment and the outcome, so
/// a retried delivery is the same event and the point service applies it once.
pub fn event(payment: &Payment) -> serde_json::Value {
    let kind = match payment.status {
        Status::Declined => "payment_declined",
        // Only settled payments are sent.
        Status::Captured | Status::Pending => "payment_captured",
    };
    json!({
        "id": format!("evt_{}_{kind}", payment.id),
        "type": kind,
        "data": {
            "reference": payment.reference,
            "payment_id": payment.id,
            "provider": "sandbox",
            "amount_minor": payment.amount_minor,
            "currency": payment.currency,
        }
    })
}

impl Sender {
    /// `idle`: how long an unused connection to the point service is kept
    /// (`HTTP_CALLER_IDLE_SECS`).
    pub fn new(url: String, secret: String, idle: Duration) -> Result<Self, reqwest::Error> {
        Ok(Self {
            url,
            secret,
            http: telemetry::client::http_client(Duration::from_secs(10), idle)?,
        })
    }

    /// Sends the payment's event once. The signature's time is the system clock's, which
    /// the point service checks against its own.
    pub async fn send(&self, payment: &Payment) -> Result<Delivered, DeliveryError> {
        let body = event(payment).to_string();
        let signature = signature(&self.secret, chrono::Utc::now().timestamp(), &body);
        let response = self
            .http
            .post(&self.url)
            .header("content-type", "application/json")
            .header("x-signature", signature)
            .body(body)
            .send()
            .await
            .map_err(|e| DeliveryError::Unreachable(e.to_string()))?;
        let status = response.status().as_u16();
        let body = response.text().await.unwrap_or_default();
        tracing::info!(
            payment.id = %payment.id,
            webhook.status = status,
            outcome = ?payment.status,
            "webhook delivered"
        );
        Ok(Delivered { status, body })
    }

    /// Sends the event until the point service takes it (2xx or 4xx: retrying a refused
    /// event would not change the answer), like a real provider's retry schedule. `true`
    /// when the point service took it.
    pub async fn send_with_retries(&self, payment: &Payment) -> bool {
        let mut wait = Duration::from_millis(500);
        for attempt in 1..=5 {
            match self.send(payment).await {
                Ok(delivered) if delivered.status < 500 => return delivered.taken(),
                Ok(delivered) => {
                    tracing::warn!(
                        payment.id = %payment.id,
                        attempt,
                        webhook.status = delivered.status,
                        "webhook refused; retrying"
                    )
                }
                Err(e) => {
                    tracing::warn!(
                        payment.id = %payment.id,
                        attempt,
                        error.message = %e,
                        "webhook failed; retrying"
                    )
                }
            }
            tokio::time::sleep(wait).await;
            wait *= 2;
        }
        tracing::error!(
            payment.id = %payment.id,
            "webhook not delivered after 5 attempts; the payment stays settled; its 3-D Secure \
             page's button sends the webhook again"
        );
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signature_is_hmac_of_timestamp_dot_body() {
        // Independently computed: printf '1700000000.{}' | openssl dgst -sha256 -hmac secret
        assert_eq!(
            signature("secret", 1_700_000_000, "{}"),
            "t=1700000000,v1=b8569b78799ff9e3cbff0fc2d63a33a2b57f3282abd07c37ae5e8e7d79a5f163"
        );
    }
}
