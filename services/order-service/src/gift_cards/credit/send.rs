//! The credit call: to the lease's target under its reference, with no database connection
//! held, and why a try did not land.

use std::time::Duration;

use serde_json::json;

use super::{CreditTarget, Lease};
use crate::config::GiftCardRetry;
use crate::state::Credit;

/// Why a try did not land.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Failure {
    /// The other side refused this credit (a 4xx other than 409 and 429): the same body
    /// again will be refused again until someone fixes one side, so it is retried only
    /// after [`REFUSED_BACKOFF`] and logged at error level every time.
    #[error("credit refused with {0}")]
    Refused(u16),
    /// No answer in time, no connection, or an answer that may heal (5xx, 401, 403, 409, 429).
    #[error("{0}")]
    Failed(String),
    /// The redemption is credited to the legacy system and this process has no
    /// `LEGACY_URL`: nothing was sent (least of all to the point service). Logged at error
    /// level every time; a process with the URL, or this one once it is set, credits it.
    #[error("the credit goes to the legacy system and LEGACY_URL is not set")]
    NoLegacyUrl,
}

/// How long a refused credit waits before its next try by the retry task: a few tries a
/// day, in case the fix was made on the other side, instead of one every few minutes.
pub const REFUSED_BACKOFF: Duration = Duration::from_secs(6 * 3600);

impl Failure {
    /// The wait before the retry task tries the credit again.
    pub fn backoff(&self, retry: &GiftCardRetry, attempt: i32) -> Duration {
        match self {
            Self::Refused(_) => REFUSED_BACKOFF,
            Self::Failed(_) | Self::NoLegacyUrl => retry.backoff(attempt),
        }
    }
}

/// Sends the credit to the lease's target under its reference. `Err` is why it cannot be
/// counted as done.
///
/// The points go as the exact decimal (plain notation, no trailing zeros: `1.23456`), which
/// the point service reads exactly; the spec's 4-decimal text is for answers only, and
/// sending it would credit 1.2346 for 1.23456, or "0" (refused) for 0.00001.
pub async fn send(credit: &Credit, lease: &Lease) -> Result<(), Failure> {
    let reference = &lease.reference;
    let points = domain::decimal::to_number(&lease.points).to_string();
    let request = match lease.target {
        CreditTarget::PointService => {
            let body = json!({
                "client_id": lease.client_id,
                "points": points,
                "reference": reference,
                "reason": "gift_card"
            })
            .to_string();
            let url = format!("{}/internal/v1/credits", credit.point_service);
            let target = reqwest::Url::parse(&url)
                .map_err(|e| Failure::Failed(format!("no URL for the credit ({url}): {e}")))?;
            // The credential is made for this one request, its body included: seen in
            // transit, it credits nothing else.
            let authorization = credit.signer.vouch(
                service_identity::Service::Point,
                None,
                "POST",
                target.path(),
                body.as_bytes(),
            );
            credit
                .http
                .post(target)
                .header(reqwest::header::AUTHORIZATION, authorization)
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(body)
        }
        // The legacy side learns the reference twice: in the body, and as the header that
        // HTTP APIs commonly deduplicate retried requests by.
        CreditTarget::Legacy => {
            let Some(url) = &credit.legacy_url else {
                return Err(Failure::NoLegacyUrl);
            };
            credit
                .http
                .post(format!("{url}/api/v1/points/add"))
                .header("idempotency-key", idempotency_key(reference))
                .json(&json!({"client_id": lease.client_id, "points": points, "reference": reference}))
        }
    };
    // The point service credits once per reference, whichever copy arrives, and the legacy
    // side is sent the reference as its idempotency key (the retry task resends the same
    // credit anyway): safe to resend when the connection closed under it
    // (`telemetry::closed_connections`).
    let request = request.with_extension(telemetry::closed_connections::Resendable);
    match request.send().await {
        Ok(response) if response.status().is_success() => Ok(()),
        // 401 and 403 are our credential refused (a key rotation half done, clocks apart):
        // ours to fix, then the next try passes, so they are retried as failures are.
        Ok(response)
            if response.status().is_client_error()
                && !matches!(response.status().as_u16(), 401 | 403 | 409 | 429) =>
        {
            Err(Failure::Refused(response.status().as_u16()))
        }
        Ok(response) => Err(Failure::Failed(format!(
            "credit answered {}",
            response.status()
        ))),
        Err(e) => Err(Failure::Failed(format!(
            "credit failed: {}",
            telemetry::client::error_chain(&e)
        ))),
    }
}

/// The reference as an `Idempotency-Key` value: as is, except that bytes a header value
/// cannot carry (a code may hold spaces or non-ASCII letters) and `%` itself are
/// percent-encoded, so every code has one key, the same on every try. Left as it was, such a
/// reference would fail every try before it was sent.
fn idempotency_key(reference: &str) -> String {
    let mut key = String::with_capacity(reference.len());
    for byte in reference.bytes() {
        if byte.is_ascii_graphic() && byte != b'%' {
            key.push(char::from(byte));
        } else {
            key.push_str(&format!("%{byte:02X}"));
        }
    }
    key
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_idempotency_key_is_the_reference_with_what_a_header_cannot_carry_encoded() {
        assert_eq!(
            idempotency_key("gift-card:WELCOME-100"),
            "gift-card:WELCOME-100"
        );
        assert_eq!(idempotency_key("gift-card:17"), "gift-card:17");
        assert_eq!(
            idempotency_key("gift-card:عيد 100%"),
            "gift-card:%D8%B9%D9%8A%D8%AF%20100%25"
        );
        for key in ["gift-card:عيد 100%", "gift-card:a\tb"].map(idempotency_key) {
            assert!(http::HeaderValue::from_str(&key).is_ok(), "{key}");
        }
    }
}
