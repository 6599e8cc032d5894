//! The sandbox's environment variables (and the common ones: `APP_ENV`, `BIND_ADDR`,
//! `HTTP_WORKERS`, the `HTTP_*` connection limits of `server::HttpLimits`, `RUST_LOG`,
//! `LOG_FORMAT`, `OTEL_EXPORTER_OTLP_ENDPOINT`):
//!
//! | Variable | Default | Meaning |
//! |---|---|---|
//! | `PAYMENT_WEBHOOK_SECRET` | required | HMAC key of the webhook's `X-Signature` |
//! | `POINT_SERVICE_WEBHOOK_URL` | `http://127.0.0.1:8083/webhooks/v1/payments` | where events go |
//! | `SANDBOX_AUTO_CAPTURE` | off | on only for the exact text `true`: capture at once |
//! | `SANDBOX_PUBLIC_URL` | `http://<BIND_ADDR>` | base of the `redirect_url` the app opens |
//! | `SANDBOX_SETTLEMENT_PAGE_SIZE` | `100` | captures per page of `GET /v1/settlements/{date}`, 1 to 10000 |

use server::{CommonConfig, Env};

use crate::clock::Clock;

/// `SANDBOX_SETTLEMENT_PAGE_SIZE`'s default.
pub const DEFAULT_SETTLEMENT_PAGE_SIZE: usize = 100;

#[derive(Debug, Clone)]
pub struct Config {
    pub common: CommonConfig,
    pub webhook_secret: String,
    pub webhook_url: String,
    pub auto_capture: bool,
    pub public_url: String,
    pub settlement_page_size: usize,
    /// Not read from the environment: the system clock, unless a test sets a manual one.
    pub clock: Clock,
}

impl Config {
    pub fn from_env(env: &mut Env, common: CommonConfig) -> Self {
        // A sandbox has no production secret to protect: any non-empty value is accepted.
        let webhook_secret = env.required("PAYMENT_WEBHOOK_SECRET");
        let webhook_url = env
            .url("POINT_SERVICE_WEBHOOK_URL")
            .unwrap_or_else(|| "http://127.0.0.1:8083/webhooks/v1/payments".to_owned());
        let public_url = env
            .url("SANDBOX_PUBLIC_URL")
            .unwrap_or_else(|| format!("http://{}", common.bind_addr));
        let settlement_page_size = env.int_or(
            "SANDBOX_SETTLEMENT_PAGE_SIZE",
            DEFAULT_SETTLEMENT_PAGE_SIZE as u64,
            1..=10_000,
        );
        Self {
            webhook_secret,
            webhook_url,
            auto_capture: env.flag("SANDBOX_AUTO_CAPTURE"),
            public_url: public_url.trim_end_matches('/').to_owned(),
            // At most 10 000, so it fits any usize.
            settlement_page_size: usize::try_from(settlement_page_size)
                .unwrap_or(DEFAULT_SETTLEMENT_PAGE_SIZE),
            clock: Clock::default(),
            common,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(vars: &[(&str, &str)]) -> Result<Config, server::ConfigError> {
        let mut env = Env::from_vars(
            [("PAYMENT_WEBHOOK_SECRET", "s")]
                .iter()
                .chain(vars)
                .map(|(k, v)| (k.to_string(), v.to_string())),
        );
        let common = CommonConfig::from_env(&mut env, "payment-sandbox", 0);
        let config = Config::from_env(&mut env, common);
        env.finish(config)
    }

    #[test]
    fn the_settlement_page_size_is_100_unless_set_within_1_to_10000() {
        assert_eq!(load(&[]).map(|c| c.settlement_page_size).ok(), Some(100));
        let set = load(&[("SANDBOX_SETTLEMENT_PAGE_SIZE", "10000")]);
        assert_eq!(set.map(|c| c.settlement_page_size).ok(), Some(10_000));
        for bad in ["0", "10001", "-1", "ten"] {
            assert!(
                load(&[("SANDBOX_SETTLEMENT_PAGE_SIZE", bad)]).is_err(),
                "{bad}"
            );
        }
    }
}
