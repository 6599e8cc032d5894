//! The order service's configuration.
//!
//! Variables (see DESIGN.md and the README): the common ones (`APP_ENV`, `BIND_ADDR`
//! default `127.0.0.1:8082`, `HTTP_WORKERS`, the `HTTP_*` connection limits of
//! `server::HttpLimits`, `DATABASE_URL`, `DATABASE_POOL_SIZE`, `RUST_LOG`, `LOG_FORMAT`,
//! `OTEL_EXPORTER_OTLP_ENDPOINT`) and:
//!
//! | Variable | Default | Meaning |
//! |---|---|---|
//! | `POINT_SERVICE_URL` | required | where the point routes are relayed: `http://host[:port]` (no path, no https) |
//! | `POINT_SERVICE_TIMEOUT_MS` | `10000` | relay wait; on expiry 504 |
//! | `POINT_SERVICE_PAY_TIMEOUT_MS` | `20000` | relay wait on the two pay routes |
//! | `AUTH_SERVICE_URL` | unset | caller lookup of the gift-card route; unset, that route answers 500 |
//! | `INTERNAL_API_TOKEN` | required | sent to the point service's `/internal/v1/credits` |
//! | `USE_POINT_SERVICE` | `true` | `false`: gift-card credit goes to `LEGACY_URL` |
//! | `LEGACY_URL` | required when `USE_POINT_SERVICE=false` | the legacy add-point call: `POST {LEGACY_URL}/api/v1/points/add` |
//! | `GIFT_CODE_TRIES_PER_CLIENT_PER_HOUR` | `10` | wrong gift-card codes per client |
//! | `GIFT_CODE_TRIES_PER_IP_PER_HOUR` | `30` | wrong gift-card codes per client address |
//! | `TRUST_X_FORWARDED_FOR` | off | `true`: the client address is the first `X-Forwarded-For` hop |
//! | `NEAREST_STORE_CACHE_SECONDS` | `10` | how long a replica keeps a brand's branches for the nearest store; `0`: read them per request |

use std::time::Duration;

use server::{CommonConfig, DatabaseConfig, Env, Secret};

#[derive(Debug, Clone)]
pub struct Config {
    pub common: CommonConfig,
    pub database: DatabaseConfig,
    pub point_service_url: String,
    pub relay_timeout: Duration,
    pub pay_timeout: Duration,
    pub auth_service_url: Option<String>,
    pub internal_token: Secret,
    pub credit: CreditTarget,
    pub tries_per_client: i64,
    pub tries_per_ip: i64,
    pub trust_forwarded_for: bool,
    pub nearest_cache_ttl: Duration,
}

/// Where gift-card credit goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CreditTarget {
    PointService,
    Legacy(String),
}

impl Config {
    pub fn from_env(env: &mut Env, common: CommonConfig, database: DatabaseConfig) -> Self {
        let point_service_url = env.url("POINT_SERVICE_URL");
        if point_service_url.is_none() && env.optional("POINT_SERVICE_URL").is_none() {
            env.error("POINT_SERVICE_URL is required but not set");
        }
        if let Some(Err(problem)) = point_service_url
            .as_deref()
            .map(crate::relay::Upstream::check)
        {
            env.error(problem);
        }
        let relay_timeout =
            Duration::from_millis(env.int_or("POINT_SERVICE_TIMEOUT_MS", 10_000, 10..=120_000));
        let pay_timeout =
            Duration::from_millis(env.int_or("POINT_SERVICE_PAY_TIMEOUT_MS", 20_000, 10..=120_000));
        let auth_service_url = env.url("AUTH_SERVICE_URL");
        let internal_token = env.secret("INTERNAL_API_TOKEN", common.app_env);
        let use_point_service = env.parse_or("USE_POINT_SERVICE", true, |s| match s {
            "true" => Ok(true),
            "false" => Ok(false),
            _ => Err("expected true or false".to_owned()),
        });
        let credit = if use_point_service {
            CreditTarget::PointService
        } else {
            match env.url("LEGACY_URL") {
                Some(url) => CreditTarget::Legacy(url),
                None => {
                    env.error("LEGACY_URL is required when USE_POINT_SERVICE=false");
                    CreditTarget::PointService
                }
            }
        };
        Self {
            common,
            database,
            point_service_url: point_service_url.unwrap_or_default(),
            relay_timeout,
            pay_timeout,
            auth_service_url,
            internal_token,
            credit,
            tries_per_client: env.int_or("GIFT_CODE_TRIES_PER_CLIENT_PER_HOUR", 10, 1..=10_000)
                as i64,
            tries_per_ip: env.int_or("GIFT_CODE_TRIES_PER_IP_PER_HOUR", 30, 1..=100_000) as i64,
            trust_forwarded_for: env.flag("TRUST_X_FORWARDED_FOR"),
            nearest_cache_ttl: Duration::from_secs(env.int_or(
                "NEAREST_STORE_CACHE_SECONDS",
                10,
                0..=3600,
            )),
        }
    }
}
