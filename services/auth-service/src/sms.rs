//! Sending login codes. The `log` provider writes the code to the log (development only:
//! the configuration refuses it in production); the `http` provider posts it to a gateway.

use std::time::Duration;

use futures_util::future::BoxFuture;
use serde::Serialize;

#[derive(Debug, thiserror::Error)]
pub enum SmsError {
    #[error("the SMS gateway could not be reached: {0}")]
    Unreachable(String),
    #[error("the SMS gateway answered {0}")]
    Refused(u16),
}

/// Login-code messages handed to the provider, by outcome: `sent`, or why not (`unreachable`,
/// `refused`). The OTP alert watches the share that failed.
pub const SENDS: &str = "otp_sms_sends_total";
const OUTCOMES: [&str; 3] = ["sent", "unreachable", "refused"];

/// Counts one send by its outcome.
pub fn count(result: &Result<(), SmsError>) {
    let outcome = match result {
        Ok(()) => OUTCOMES[0],
        Err(SmsError::Unreachable(_)) => OUTCOMES[1],
        Err(SmsError::Refused(_)) => OUTCOMES[2],
    };
    metrics::counter!(SENDS, "outcome" => outcome).increment(1);
}

/// The counter at zero from the start (`telemetry::metrics::counters_at_zero` says why), with
/// its HELP text: the one family this service records itself (the shared ones are described
/// by `telemetry` and `server::ops_metrics`).
pub fn export_counters() {
    telemetry::metrics::counters_at_zero(SENDS, "outcome", &OUTCOMES);
    metrics::describe_counter!(
        SENDS,
        metrics::Unit::Count,
        "Login-code SMS handed to the provider, by outcome: sent, unreachable (the gateway could \
         not be reached) or refused (it answered an error)."
    );
}

pub trait SmsProvider: Send + Sync {
    /// Sends `text` to `phone`. Implementations must not log `text`: it holds the code.
    fn send<'a>(&'a self, phone: &'a str, text: &'a str) -> BoxFuture<'a, Result<(), SmsError>>;
}

/// Writes the message to the log instead of sending it.
pub struct LogSms;

impl SmsProvider for LogSms {
    fn send<'a>(&'a self, phone: &'a str, text: &'a str) -> BoxFuture<'a, Result<(), SmsError>> {
        Box::pin(async move {
            tracing::info!(
                sms.to = phone,
                sms.text = text,
                "SMS (log provider, not sent)"
            );
            Ok(())
        })
    }
}

/// Posts `{"to": phone, "message": text}` to a gateway; any 2xx means sent. The gateway's
/// URL may carry the provider's API key in its query, so no error of this provider names
/// it: reqwest's errors print their URL unless it is taken off (`without_url`).
pub struct HttpSms {
    url: String,
    client: telemetry::client::HttpClient,
}

impl HttpSms {
    pub fn new(url: String, timeout: Duration) -> Result<Self, reqwest::Error> {
        Ok(Self {
            url,
            client: telemetry::client::http_client(timeout, telemetry::client::DEFAULT_IDLE)?,
        })
    }
}

#[derive(Serialize)]
struct Message<'a> {
    to: &'a str,
    message: &'a str,
}

impl SmsProvider for HttpSms {
    fn send<'a>(&'a self, phone: &'a str, text: &'a str) -> BoxFuture<'a, Result<(), SmsError>> {
        Box::pin(async move {
            let response = self
                .client
                .post(&self.url)
                .json(&Message {
                    to: phone,
                    message: text,
                })
                .send()
                .await
                .map_err(|e| {
                    SmsError::Unreachable(telemetry::client::without_url(e).to_string())
                })?;
            let status = response.status();
            if status.is_success() {
                Ok(())
            } else {
                Err(SmsError::Refused(status.as_u16()))
            }
        })
    }
}

/// The text of a login code message.
pub fn code_message(code: &str) -> String {
    format!("رمز التحقق: {code}\nYour verification code: {code}")
}
