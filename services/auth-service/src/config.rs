//! The auth service's configuration.
//!
//! Variables (see docs/design.md and the README): the common ones (`APP_ENV`, `BIND_ADDR`
//! default `127.0.0.1:8081`, `HTTP_WORKERS`, the `HTTP_*` connection limits of
//! `server::HttpLimits`, `DATABASE_URL`, `DATABASE_POOL_SIZE`, `RUST_LOG`, `LOG_FORMAT`,
//! `OTEL_EXPORTER_OTLP_ENDPOINT`) and:
//!
//! - `AUTH_JWT_SECRET` (required): HS256 key of primary tokens; also keys the OTP hashes.
//! - `SERVICE_IDENTITY_TRUST` (required in production): the public keys of the services that
//!   call `/internal/v1/...` (`service_identity::config`).
//! - `OTP_TEST_CODE` (`1234` outside production; none in production): the fixed code of
//!   test-mode accounts (4 digits). In production it comes from a Secret; unset, test-mode
//!   accounts get no code and cannot log in; `1234` (the development value) refuses to start.
//! - `SMS_PROVIDER` (required): `log` (writes the code to the log; refused in production) or
//!   `http`.
//! - `SMS_HTTP_URL` (required for `http`): where the `http` provider posts `{to, message}`.
//! - `SMS_HTTP_TIMEOUT_MS` (`5000`): its timeout.
//! - `OTP_SMS_PER_PHONE_PER_HOUR` (`5`): SMS actually sent to one phone.
//! - `OTP_SMS_PER_IP_PER_HOUR` (`20`): SMS actually sent for one client address.
//! - `OTP_TRIES_PER_PHONE_PER_HOUR` (`10`): codes tried for one phone.
//! - `OTP_TRIES_PER_IP_PER_HOUR` (`50`): codes tried from one client address.
//! - `OTP_UNKNOWN_PHONES_PER_IP_PER_HOUR` (`1000`): phones with no account asked for
//!   (reset-otp's [`crate::otp::ResetRefusal::UnknownPhone`], verify-otp's
//!   [`crate::otp::VerifyRefusal::WrongCode`]) from one client address; past it that address
//!   gets the OTP 429 for every phone, known ones too, so the routes cannot be used to list
//!   who is a client. Generous: an honest app mistypes a phone a few times, many users may
//!   share one address, and an unknown phone costs no SMS; at 1000 an hour, one address
//!   needs years to try a country's mobile numbers.
//! - `CLIENT_LOOKUPS_PER_CLIENT_PER_HOUR` (`30`): client lookups by phone
//!   (`GET /api/v1/clients`) one caller may make, found or not.
//! - `LEGACY_TOKENS_PER_CLIENT_PER_HOUR` (`20`): legacy tokens exchange-token may mint (and
//!   store) for one client.
//! - `TRUST_X_FORWARDED_FOR` (off): `true`: the client address is the first
//!   `X-Forwarded-For` hop (only behind a proxy that sets it).

use std::time::Duration;

use server::{AppEnv, CommonConfig, DatabaseConfig, Env, Secret};

use crate::client_limits::ClientLimits;
use crate::clock::Clock;
use crate::otp::Limits;

/// `OTP_TEST_CODE`'s value outside production, and the one value production refuses: it is
/// public (README, demo data), and test-mode accounts exist in production for store
/// reviewers.
pub const DEVELOPMENT_TEST_CODE: &str = "1234";

#[derive(Debug, Clone)]
pub struct Config {
    pub common: CommonConfig,
    pub database: DatabaseConfig,
    pub jwt_secret: Secret,
    pub identity: service_identity::Verifier,
    /// `None`: test-mode accounts get no code (production without the Secret's value).
    pub otp_test_code: Option<Secret>,
    /// Not read from the environment: the database's clock, unless a test sets a manual one.
    pub otp_clock: Clock,
    pub sms: SmsConfig,
    pub limits: Limits,
    pub client_limits: ClientLimits,
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
        let identity = service_identity::config::verifier(
            env,
            common.app_env,
            service_identity::Service::Auth,
        );
        let otp_test_code = otp_test_code(env, common.app_env);
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
                let timeout = env.millis_or(
                    "SMS_HTTP_TIMEOUT_MS",
                    Duration::from_millis(5000),
                    100..=60_000,
                );
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
            unknown_phones_per_ip: env.int_or(
                "OTP_UNKNOWN_PHONES_PER_IP_PER_HOUR",
                1000,
                1..=100_000,
            ) as i64,
        };
        let client_limits = ClientLimits {
            lookups_per_hour: env.int_or("CLIENT_LOOKUPS_PER_CLIENT_PER_HOUR", 30, 1..=10_000)
                as i64,
            legacy_tokens_per_hour: env.int_or("LEGACY_TOKENS_PER_CLIENT_PER_HOUR", 20, 1..=10_000)
                as i64,
        };
        let trust_forwarded_for = env.flag("TRUST_X_FORWARDED_FOR");
        Self {
            common,
            database,
            jwt_secret,
            identity,
            otp_test_code,
            otp_clock: Clock::Database,
            sms,
            limits,
            client_limits,
            trust_forwarded_for,
        }
    }
}

/// `OTP_TEST_CODE`: 4 digits. Outside production it defaults to the development value; in
/// production it has no default, and the development value is refused.
fn otp_test_code(env: &mut Env, app_env: AppEnv) -> Option<Secret> {
    let production = app_env == AppEnv::Production;
    let default = (!production).then(|| DEVELOPMENT_TEST_CODE.to_owned());
    let code = env
        .secret_parse("OTP_TEST_CODE", |s| {
            if s.len() == 4 && s.bytes().all(|b| b.is_ascii_digit()) {
                Ok(s.to_owned())
            } else {
                Err("expected 4 digits".to_owned())
            }
        })
        .or(default);
    if production && code.as_deref() == Some(DEVELOPMENT_TEST_CODE) {
        env.error(format!(
            "OTP_TEST_CODE={DEVELOPMENT_TEST_CODE} is the public development code and is refused in production: \
             set a secret 4-digit code from the Secret, or leave it unset (test-mode accounts then cannot log in)"
        ));
    }
    code.map(Secret::new)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn test_code(vars: &[(&str, &str)], app_env: AppEnv) -> Result<Option<String>, Vec<String>> {
        let mut env = Env::from_vars(vars.iter().copied());
        let code = otp_test_code(&mut env, app_env);
        env.finish(code.map(|c| c.expose().to_owned()))
            .map_err(|e| e.0)
    }

    #[test]
    fn the_test_code_has_a_default_only_outside_production() {
        assert_eq!(test_code(&[], AppEnv::Development), Ok(Some("1234".into())));
        assert_eq!(test_code(&[], AppEnv::Production), Ok(None));
        assert_eq!(
            test_code(&[("OTP_TEST_CODE", "8051")], AppEnv::Production),
            Ok(Some("8051".into()))
        );
    }

    #[test]
    fn production_refuses_the_development_code_with_a_clear_message() {
        let errors = test_code(&[("OTP_TEST_CODE", "1234")], AppEnv::Production).unwrap_err();
        assert_eq!(errors.len(), 1);
        assert!(
            errors[0].starts_with("OTP_TEST_CODE=1234 is the public development code"),
            "{errors:?}"
        );
        let errors = test_code(&[("OTP_TEST_CODE", "12a4")], AppEnv::Production).unwrap_err();
        assert_eq!(errors, ["OTP_TEST_CODE is invalid: expected 4 digits"]);
    }
}
