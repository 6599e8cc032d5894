//! The order service's configuration.
//!
//! Variables (see docs/design.md and the README): the common ones (`APP_ENV`, `BIND_ADDR`
//! default `127.0.0.1:8082`, `HTTP_WORKERS`, the `HTTP_*` connection limits of
//! `server::HttpLimits`, `DATABASE_URL`, `DATABASE_POOL_SIZE`, `RUST_LOG`, `LOG_FORMAT`,
//! `OTEL_EXPORTER_OTLP_ENDPOINT`) and:
//!
//! - `POINT_SERVICE_URL` (required): where the point routes are relayed:
//!   `http://host[:port]` (no path, no https).
//! - `POINT_SERVICE_TIMEOUT_MS` (`10000`): relay wait; on expiry 504.
//! - `POINT_SERVICE_PAY_TIMEOUT_MS` (`20000`): relay wait on the two pay routes.
//! - `AUTH_SERVICE_URL` (unset): caller lookup of the gift-card route; unset, that route
//!   answers 500.
//! - `SERVICE_IDENTITY_KEY` (required in production): this service's own key, which signs
//!   its calls to the point service's `/internal/v1/credits` (`service_identity::config`).
//! - `SERVICE_IDENTITY_TRUST` (required in production): the public keys of the services that
//!   call its internal routes (the back office: the operator service).
//! - `USE_POINT_SERVICE` (`true`): where new gift-card redemptions are credited: the point
//!   service, or with `false` the legacy system; a redemption keeps the target it was made
//!   with.
//! - `LEGACY_URL` (required when `USE_POINT_SERVICE=false`): the legacy add-point call,
//!   `POST {LEGACY_URL}/api/v1/points/add`; used with `USE_POINT_SERVICE=true` too, for the
//!   legacy redemptions still pending after a switch (without it they stay pending and are
//!   logged at error level).
//! - `GIFT_CODE_TRIES_PER_CLIENT_PER_HOUR` (`10`): wrong gift-card codes per client.
//! - `GIFT_CODE_TRIES_PER_IP_PER_HOUR` (`30`): wrong gift-card codes per client address.
//! - `GIFT_CARD_RETRY_INTERVAL_MS` (`5000`): how often each replica's retry task looks for
//!   gift-card credits that failed; also the first retry's delay.
//! - `GIFT_CARD_RETRY_MAX_BACKOFF_SECONDS` (`600`): the longest wait between two tries of one
//!   credit (the wait doubles from the interval up to this).
//! - `GIFT_CARD_CREDIT_LEASE_SECONDS` (`60`): how long a request or a retry task holds a
//!   credit it is sending; another may take it over only after that (15 to 3600: above the
//!   credit call's 10 s wait).
//! - `TRUST_X_FORWARDED_FOR` (off): `true`: the client address is the first
//!   `X-Forwarded-For` hop.
//! - `NEAREST_STORE_CACHE_SECONDS` (`10`): how long a replica keeps a brand's branches for the
//!   nearest store; `0`: read them per request.
//! - `NATS_URL`, `EVENTS_POLL_MS`: where the catalog's events go (`outbox`); `HOSTNAME`: this
//!   replica's name in the publisher's lease.

use std::time::Duration;

use server::{CommonConfig, DatabaseConfig, Env};

pub use crate::gift_cards::credit::CreditTarget;

#[derive(Debug, Clone)]
pub struct Config {
    pub common: CommonConfig,
    pub database: DatabaseConfig,
    pub point_service_url: String,
    pub relay_timeout: Duration,
    pub pay_timeout: Duration,
    pub auth_service_url: Option<String>,
    pub signer: std::sync::Arc<service_identity::Signer>,
    pub identity: service_identity::Verifier,
    pub credit: GiftCardCredit,
    pub tries_per_client: i64,
    pub tries_per_ip: i64,
    pub trust_forwarded_for: bool,
    pub nearest_cache_ttl: Duration,
    pub gift_card_retry: GiftCardRetry,
    /// `HOSTNAME`, when set.
    pub hostname: Option<String>,
    /// `NATS_URL`, `EVENTS_POLL_MS` (`outbox`).
    pub events: outbox::EventSettings,
}

/// How failed gift-card credits are retried (`crate::gift_cards::retry`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GiftCardRetry {
    /// The retry task's pause between two passes, and the first retry's delay.
    pub interval: Duration,
    /// The cap of the doubling delay between two tries of one credit.
    pub max_backoff: Duration,
    /// How long the holder of a credit (a request or a retry task) has to finish it before
    /// another may take it over; longer than the credit call's wait, so a live holder never
    /// loses it.
    pub lease: Duration,
}

impl GiftCardRetry {
    fn from_env(env: &mut Env) -> Self {
        Self {
            interval: env.millis_or(
                "GIFT_CARD_RETRY_INTERVAL_MS",
                Duration::from_secs(5),
                10..=3_600_000,
            ),
            max_backoff: env.secs_or(
                "GIFT_CARD_RETRY_MAX_BACKOFF_SECONDS",
                Duration::from_secs(600),
                1..=86_400,
            ),
            lease: env.secs_or(
                "GIFT_CARD_CREDIT_LEASE_SECONDS",
                Duration::from_secs(60),
                15..=3600,
            ),
        }
    }

    /// The wait before the next try of a credit that has failed `attempts` times: the
    /// interval, doubled per further failure, capped.
    pub fn backoff(&self, attempts: i32) -> Duration {
        let doublings = u32::try_from(attempts.saturating_sub(1))
            .unwrap_or(0)
            .min(20);
        self.interval
            .saturating_mul(1 << doublings)
            .min(self.max_backoff)
    }
}

/// Where gift-card credit goes (`crate::gift_cards::credit`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GiftCardCredit {
    /// Where new redemptions are credited (`USE_POINT_SERVICE`). A redemption is credited
    /// where it was made to be, so this never redirects one that exists; it also fixes the
    /// target of a redemption made before targets were recorded, at its first try.
    pub target: CreditTarget,
    /// `LEGACY_URL`, whenever set: a redemption made for the legacy system needs it until
    /// it is credited, whatever `USE_POINT_SERVICE` says now.
    pub legacy_url: Option<String>,
}

impl GiftCardCredit {
    fn from_env(env: &mut Env) -> Self {
        let use_point_service = env.parse_or("USE_POINT_SERVICE", true, |s| match s {
            "true" => Ok(true),
            "false" => Ok(false),
            _ => Err("expected true or false".to_owned()),
        });
        let legacy_url = env.url("LEGACY_URL");
        if !use_point_service && legacy_url.is_none() && env.optional("LEGACY_URL").is_none() {
            env.error("LEGACY_URL is required when USE_POINT_SERVICE=false");
        }
        Self {
            target: if use_point_service {
                CreditTarget::PointService
            } else {
                CreditTarget::Legacy
            },
            legacy_url,
        }
    }
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
        let relay_timeout = env.call_wait("POINT_SERVICE_TIMEOUT_MS", RELAY_WAIT);
        let pay_timeout = env.call_wait("POINT_SERVICE_PAY_TIMEOUT_MS", PAY_WAIT);
        let auth_service_url = env.url("AUTH_SERVICE_URL");
        let me = service_identity::Service::Order;
        let signer = std::sync::Arc::new(service_identity::config::signer(env, common.app_env, me));
        let identity = service_identity::config::verifier(env, common.app_env, me);
        let credit = GiftCardCredit::from_env(env);
        Self {
            common,
            database,
            point_service_url: point_service_url.unwrap_or_default(),
            relay_timeout,
            pay_timeout,
            auth_service_url,
            signer,
            identity,
            credit,
            tries_per_client: env.int_or("GIFT_CODE_TRIES_PER_CLIENT_PER_HOUR", 10, 1..=10_000)
                as i64,
            tries_per_ip: env.int_or("GIFT_CODE_TRIES_PER_IP_PER_HOUR", 30, 1..=100_000) as i64,
            trust_forwarded_for: env.flag("TRUST_X_FORWARDED_FOR"),
            nearest_cache_ttl: env.secs_or(
                "NEAREST_STORE_CACHE_SECONDS",
                Duration::from_secs(10),
                0..=3600,
            ),
            gift_card_retry: GiftCardRetry::from_env(env),
            hostname: env.optional("HOSTNAME"),
            events: outbox::EventSettings::from_env(env),
        }
    }
}

/// How long the relay waits for the point service by default (`POINT_SERVICE_TIMEOUT_MS`).
pub const RELAY_WAIT: Duration = Duration::from_secs(10);
/// ... and on the two pay routes, which call the payment service
/// (`POINT_SERVICE_PAY_TIMEOUT_MS`).
pub const PAY_WAIT: Duration = Duration::from_secs(20);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_backoff_doubles_from_the_interval_up_to_its_cap() {
        let retry = GiftCardRetry {
            interval: Duration::from_secs(5),
            max_backoff: Duration::from_secs(60),
            lease: Duration::from_secs(60),
        };
        let waits: Vec<u64> = [0, 1, 2, 3, 4, 5, 1000, i32::MAX]
            .map(|attempts| retry.backoff(attempts).as_secs())
            .to_vec();
        assert_eq!(waits, [5, 5, 10, 20, 40, 60, 60, 60]);
    }

    fn credit(vars: &[(&str, &str)]) -> Result<GiftCardCredit, server::ConfigError> {
        let mut env = Env::from_vars(vars.iter().copied());
        let credit = GiftCardCredit::from_env(&mut env);
        env.finish(credit)
    }

    #[test]
    fn a_relay_wait_longer_than_a_stopping_server_serves_refuses_to_start() {
        let wait = |value: &str| {
            let mut env = Env::from_vars([("POINT_SERVICE_PAY_TIMEOUT_MS", value)]);
            let wait = env.call_wait("POINT_SERVICE_PAY_TIMEOUT_MS", PAY_WAIT);
            env.finish(wait).map_err(|e| e.to_string())
        };
        assert_eq!(wait("24999"), Ok(Duration::from_millis(24_999)));
        let refused = wait("25000").unwrap_err();
        assert!(
            refused.contains("POINT_SERVICE_PAY_TIMEOUT_MS must be at most 24999 ms"),
            "{refused}"
        );
        assert!(wait("9").is_err());
        assert!(PAY_WAIT < server::run::SHUTDOWN_TIMEOUT);
    }

    #[test]
    fn the_legacy_url_stays_known_after_the_switch_to_the_point_service() {
        assert_eq!(
            credit(&[
                ("USE_POINT_SERVICE", "true"),
                ("LEGACY_URL", "http://legacy:80/")
            ])
            .ok(),
            Some(GiftCardCredit {
                target: CreditTarget::PointService,
                legacy_url: Some("http://legacy:80".to_owned()),
            })
        );
        assert_eq!(
            credit(&[
                ("USE_POINT_SERVICE", "false"),
                ("LEGACY_URL", "http://legacy")
            ])
            .ok(),
            Some(GiftCardCredit {
                target: CreditTarget::Legacy,
                legacy_url: Some("http://legacy".to_owned()),
            })
        );
        assert_eq!(
            credit(&[]).ok(),
            Some(GiftCardCredit {
                target: CreditTarget::PointService,
                legacy_url: None,
            })
        );
        assert_eq!(
            credit(&[("USE_POINT_SERVICE", "false")])
                .err()
                .map(|e| e.to_string()),
            Some("LEGACY_URL is required when USE_POINT_SERVICE=false".to_owned())
        );
    }
}
