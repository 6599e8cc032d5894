//! The auth service's configuration.
//!
//! Variables (see DESIGN.md and the README): the common ones (`APP_ENV`, `BIND_ADDR`
//! default `127.0.0.1:8081`, `HTTP_WORKERS`, the `HTTP_*` connection limits of
//! `server::HttpLimits`, `DATABASE_URL`, `DATABASE_POOL_SIZE`, `RUST_LOG`, `LOG_FORMAT`,
//! `OTEL_EXPORTER_OTLP_ENDPOINT`) and:
//!
//! | Variable | Default | Meaning |
//! |---|---|---|
//! | `AUTH_JWT_SECRET` | required | HS256 key of primary tokens; also keys the OTP hashes |
//! | `INTERNAL_API_TOKEN` | required | `X-Internal-Token` of `/internal/v1/...` |
//! | `OTP_TEST_CODE` | `1234` | the fixed code of test-mode accounts (4 digits) |
//! | `SMS_PROVIDER` | required | `log` (writes the code to the log; refused in production) or `http` |
//! | `SMS_HTTP_URL` | required for `http` | where the `http` provider posts `{to, message}` |
//! | `SMS_HTTP_TIMEOUT_MS` | `5000` | its timeout |
//! | `OTP_SMS_PER_PHONE_PER_HOUR` | `5` | SMS actually sent to one phone |
//! | `OTP_SMS_PER_IP_PER_HOUR` | `20` | SMS actually sent for one client address |
//! | `OTP_TRIES_PER_PHONE_PER_HOUR` | `10` | codes tried for one phone |
//! | `OTP_TRIES_PER_IP_PER_HOUR` | `50` | codes tried from one client address |
//! | `TRUST_X_FORWARDED_FOR` | off | `true`: the client address is the first `X-Forwarded-For` hop (only behind a proxy that sets it) |

use std::time::Duration;

use server::{AppEnv, CommonConfig, DatabaseConfig, Env, Secret};

use crate::otp::Limits;

#[derive(Debug, Clone)]
pub struct Config {
    pub common: CommonConfig,
    pub database: DatabaseConfig,
    pub jwt_secret: Secret,
    pub internal_token: Secret,
    pub otp_test_code: String,
    pub sms: SmsConfig,
    pub limits: Limits,
    pub trust_forwarded_for: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SmsConfig {
    Log,
    Http { url: String, timeout: Duration },
}

impl Config {
    pub fn from_env(env: &mut Env, common: CommonConfig, database: DatabaseConfig) -> Self {
        let jwt_secret = env.secret("AUTH_JWT_SECRET", common.app_env);
        let internal_token = env.secret("INTERNAL_API_TOKEN", common.app_env);
        let otp_test_code = env.parse_or("OTP_TEST_CODE", "1234".to_owned(), |s| {
            if s.len() == 4 && s.bytes().all(|b| b.is_ascii_digit()) {
                Ok(s.to_owned())
            } else {
                Err("expected 4 digits".to_owned())
            }
        });
        let sms = match env.required("SMS_PROVIDER").as_str() {
            "log" if common.app_env == AppEnv::Production => {
                env.error("SMS_PROVIDER=\"log\" writes login codes to the log and is refused in production");
                SmsConfig::Log
            }
            "log" => SmsConfig::Log,
            "http" => {
                let url = env.url("SMS_HTTP_URL");
                if url.is_none() {
                    env.error("SMS_HTTP_URL is required when SMS_PROVIDER=http");
                }
                let timeout =
                    Duration::from_millis(env.int_or("SMS_HTTP_TIMEOUT_MS", 5000, 100..=60_000));
                SmsConfig::Http {
                    url: url.unwrap_or_default(),
                    timeout,
                }
            }
            "" => SmsConfig::Log,
            other => {
                env.error(format!(
                    "SMS_PROVIDER={other:?} is invalid: expected log or http"
                ));
                SmsConfig::Log
            }
        };
        let limits = Limits {
            sms_per_phone: env.int_or("OTP_SMS_PER_PHONE_PER_HOUR", 5, 1..=1000) as i64,
            sms_per_ip: env.int_or("OTP_SMS_PER_IP_PER_HOUR", 20, 1..=100_000) as i64,
            tries_per_phone: env.int_or("OTP_TRIES_PER_PHONE_PER_HOUR", 10, 1..=1000) as i64,
            tries_per_ip: env.int_or("OTP_TRIES_PER_IP_PER_HOUR", 50, 1..=100_000) as i64,
        };
        let trust_forwarded_for = env.flag("TRUST_X_FORWARDED_FOR");
        Self {
            common,
            database,
            jwt_secret,
            internal_token,
            otp_test_code,
            sms,
            limits,
            trust_forwarded_for,
        }
    }
}
