//! The point service's configuration.
//!
//! Variables (see docs/design.md and the README): the common ones (`APP_ENV`, `BIND_ADDR`
//! default `127.0.0.1:8083`, `HTTP_WORKERS`, the `HTTP_*` connection limits of
//! `server::HttpLimits`, `DATABASE_URL`, `DATABASE_POOL_SIZE`, `RUST_LOG`, `LOG_FORMAT`,
//! `OTEL_EXPORTER_OTLP_ENDPOINT`) and:
//!
//! - `AUTH_SERVICE_URL` (unset): the auth service; unset, the point routes answer 500
//!   (`server::caller::CallerError::NotConfigured`).
//! - `AUTH_SERVICE_TIMEOUT_MS` (default `5000`): wait for the auth service.
//! - `AUTH_CALLER_CACHE_SECONDS` (default `5`): how long a replica keeps a token's successful
//!   caller lookup (`server::caller`); `0`: look up every request.
//! - `SERVICE_IDENTITY_KEY` (required in production): this service's own key, which signs
//!   its calls to the auth service's internal route (`service_identity::config`).
//! - `SERVICE_IDENTITY_TRUST` (required in production): the public keys of the services that
//!   call its internal routes (credits: the order service; the back office: the operator
//!   service).
//! - `PAYMENT_SERVICE_URL` (unset): the payment service; unset, the pay routes answer 500.
//! - `PAYMENT_SERVICE_TIMEOUT_MS` (default `10000`): wait for the payment service.
//! - `PAYMENT_WEBHOOK_SECRET` (required): HMAC key of the payment webhook's `X-Signature`.
//! - `POINT_ORDER_POINT_ENABLED` (default off): on only for the exact text `true`: create with
//!   `payment_type=point`.
//! - `POINT_ORDER_CARD_ENABLED` (default off): on only for the exact text `true`: the two pay
//!   routes.
//! - `UNPAID_ORDERS_PER_CLIENT_PER_DAY` (default `1000`): unpaid `checkout` orders a payer may
//!   have created in the last 24 hours; the next create answers 429 (a checkout order costs
//!   nothing until paid, so without a bound one client could grow the table without limit).
//! - `PAYMENT_ATTEMPTS_PER_ORDER` (default `20`): pay calls (card or session) one order may
//!   make; the next answers 429 (each asks the payment service and is recorded).
//! - `UNPAID_ORDER_LAPSE_HOURS` (default `24`, 1 to 720): how long after it was made a
//!   checkout order may be paid; a pay call after it answers 409 (`orders::payable`), so an
//!   order cannot wait for days and be paid at a price since withdrawn.
//! - `PAYMENT_SYNC_AFTER_SECONDS` (default `120`): how old an open order's latest pay attempt
//!   is before its payments are read back from the payment service (`payments::sync`).
//! - `PAYMENT_SYNC_INTERVAL_SECONDS` (default `30`): how often `serve` looks for orders to sync
//!   (and refreshes the payment gauges).
//! - `PAYMENT_SYNC_READS_PER_SECOND` (default `10`): the most read-back calls the sync makes
//!   per second, across all replicas (one worker at a time holds the sync), so a backlog after an
//!   outage cannot flood the payment service.
//! - `HOSTNAME` (unset): the pod's name (Kubernetes sets it): the payment sync's lease is held
//!   under it and the listen address, so a container restarted in its pod takes the lease back at
//!   once instead of waiting for it to run out.
//! - `PAYMENT_SYNC_HORIZON_DAYS` (default `3`): past this many days after its latest pay
//!   attempt, an order still open with its payment undecided is listed for a person
//!   (`point-service unsynced-orders`) instead of read back again.
//! - `POINT_ORDER_BATCH_WINDOW_MS` (default `0`, at most `50`): how long a batcher of point
//!   orders paid with points waits for more orders once it has one (`orders::batches`); `0`
//!   takes only those already waiting, which under load is a batch and alone is no wait.
//! - `POINT_ORDER_BATCH_MAX` (default `64`, 1 to 1000): the most such orders written in
//!   one transaction; `1` writes each in its own.
//! - `POINT_ORDER_BATCH_LANES` (default `1`, 1 to 32, below `DATABASE_POOL_SIZE`): batchers per
//!   replica, each holding one database connection while it writes a batch; a payer's orders
//!   always go to the same one.
//! - `OFFER_MAX_POINTS_PER_SAR` (unset): the most points per SAR an admin's offer may give (a
//!   positive decimal, at most 4 decimals); a super_admin may give more. Unset: the highest
//!   rate of the offers `seed` loaded that no operator has changed since; with none, only a
//!   super_admin may make or raise an offer (`back_office::offer_limit`).
//! - `NATS_URL`, `EVENTS_POLL_MS`: where the points events go (`outbox`).

use std::time::Duration;

use server::{CommonConfig, DatabaseConfig, Env, Secret};

pub use crate::orders::BatchSettings;

#[derive(Debug, Clone)]
pub struct Config {
    pub common: CommonConfig,
    pub database: DatabaseConfig,
    pub auth_service_url: Option<String>,
    pub auth_timeout: Duration,
    pub caller_cache_ttl: Duration,
    pub signer: std::sync::Arc<service_identity::Signer>,
    pub identity: service_identity::Verifier,
    pub payment_service_url: Option<String>,
    pub payment_timeout: Duration,
    pub webhook_secret: Secret,
    pub flags: Flags,
    pub limits: Limits,
    pub sync: SyncSettings,
    /// `HOSTNAME`, when set.
    pub hostname: Option<String>,
    /// `OFFER_MAX_POINTS_PER_SAR`, when set.
    pub offer_max_points_per_sar: Option<bigdecimal::BigDecimal>,
    /// `POINT_ORDER_BATCH_*`.
    pub batches: BatchSettings,
    /// `NATS_URL`, `EVENTS_POLL_MS` (`outbox`).
    pub events: outbox::EventSettings,
}

/// The payment sync's pace (`payments::sync`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SyncSettings {
    /// `PAYMENT_SYNC_AFTER_SECONDS`: an order is synced once its latest attempt is this old.
    pub after: Duration,
    /// `PAYMENT_SYNC_INTERVAL_SECONDS`: the wait between two looks for due orders.
    pub interval: Duration,
    /// `PAYMENT_SYNC_READS_PER_SECOND`.
    pub reads_per_second: u64,
    /// `PAYMENT_SYNC_HORIZON_DAYS`, as a duration.
    pub horizon: Duration,
}

impl Default for SyncSettings {
    fn default() -> Self {
        Self {
            after: Duration::from_secs(120),
            interval: Duration::from_secs(30),
            reads_per_second: 10,
            horizon: Duration::from_secs(3 * DAY),
        }
    }
}

const DAY: u64 = 24 * 3600;

/// Bounds on what one client can make the service store (the table of each grows only this
/// fast per client).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// `UNPAID_ORDERS_PER_CLIENT_PER_DAY`.
    pub unpaid_orders_per_day: u64,
    /// `PAYMENT_ATTEMPTS_PER_ORDER`.
    pub attempts_per_order: u64,
    /// `UNPAID_ORDER_LAPSE_HOURS`: how long a checkout order may be paid after it was made.
    pub unpaid_order_lapse_hours: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            unpaid_orders_per_day: 1000,
            attempts_per_order: 20,
            unpaid_order_lapse_hours: 24,
        }
    }
}

/// The two feature flags of the spec.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Flags {
    pub point_orders: bool,
    pub card_payments: bool,
}

impl Config {
    pub fn from_env(env: &mut Env, common: CommonConfig, database: DatabaseConfig) -> Self {
        let auth_service_url = env.url("AUTH_SERVICE_URL");
        let auth_timeout = env.millis_or(
            "AUTH_SERVICE_TIMEOUT_MS",
            Duration::from_millis(5000),
            100..=60_000,
        );
        let caller_cache_ttl =
            env.secs_or("AUTH_CALLER_CACHE_SECONDS", Duration::from_secs(5), 0..=60);
        let me = service_identity::Service::Point;
        let signer = std::sync::Arc::new(service_identity::config::signer(env, common.app_env, me));
        let identity = service_identity::config::verifier(env, common.app_env, me);
        let payment_service_url = env.url("PAYMENT_SERVICE_URL");
        let payment_timeout = env.millis_or(
            "PAYMENT_SERVICE_TIMEOUT_MS",
            Duration::from_millis(10_000),
            100..=120_000,
        );
        let webhook_secret = env.secret("PAYMENT_WEBHOOK_SECRET", common.app_env);
        let flags = Flags {
            point_orders: env.flag("POINT_ORDER_POINT_ENABLED"),
            card_payments: env.flag("POINT_ORDER_CARD_ENABLED"),
        };
        let defaults = Limits::default();
        let limits = Limits {
            unpaid_orders_per_day: env.int_or(
                "UNPAID_ORDERS_PER_CLIENT_PER_DAY",
                defaults.unpaid_orders_per_day,
                1..=1_000_000,
            ),
            attempts_per_order: env.int_or(
                "PAYMENT_ATTEMPTS_PER_ORDER",
                defaults.attempts_per_order,
                1..=1000,
            ),
            unpaid_order_lapse_hours: env.int_or(
                "UNPAID_ORDER_LAPSE_HOURS",
                defaults.unpaid_order_lapse_hours,
                1..=720,
            ),
        };
        let sync_defaults = SyncSettings::default();
        let sync = SyncSettings {
            after: env.secs_or(
                "PAYMENT_SYNC_AFTER_SECONDS",
                sync_defaults.after,
                1..=86_400,
            ),
            interval: env.secs_or(
                "PAYMENT_SYNC_INTERVAL_SECONDS",
                sync_defaults.interval,
                1..=3600,
            ),
            reads_per_second: env.int_or(
                "PAYMENT_SYNC_READS_PER_SECOND",
                sync_defaults.reads_per_second,
                1..=1000,
            ),
            horizon: Duration::from_secs(
                env.int_or(
                    "PAYMENT_SYNC_HORIZON_DAYS",
                    sync_defaults.horizon.as_secs() / DAY,
                    1..=90,
                ) * DAY,
            ),
        };
        let batch_defaults = BatchSettings::default();
        let batches = BatchSettings {
            window: env.millis_or("POINT_ORDER_BATCH_WINDOW_MS", batch_defaults.window, 0..=50),
            batch_max: env.int_or(
                "POINT_ORDER_BATCH_MAX",
                batch_defaults.batch_max as u64,
                1..=1000,
            ) as usize,
            lanes: env.int_or(
                "POINT_ORDER_BATCH_LANES",
                batch_defaults.lanes as u64,
                1..=32,
            ) as usize,
        };
        // Each batcher holds a connection while it writes; the checks before a batch and
        // every other route need the rest of the pool.
        if batches.lanes >= database.pool_size {
            env.error(format!(
                "POINT_ORDER_BATCH_LANES ({}) must be below DATABASE_POOL_SIZE ({}): each batcher \
                 holds a connection while it writes, and the other routes need the rest",
                batches.lanes, database.pool_size
            ));
        }
        let hostname = env.optional("HOSTNAME");
        let offer_max_points_per_sar = env.parse_or("OFFER_MAX_POINTS_PER_SAR", None, |raw| {
            raw.parse::<domain::Points>()
                .ok()
                .map(domain::Points::into_decimal)
                .filter(|points| {
                    *points > <bigdecimal::BigDecimal as bigdecimal::Zero>::zero()
                        && points.normalized().fractional_digit_count() <= 4
                })
                .map(Some)
                .ok_or_else(|| "expected a positive decimal with at most 4 decimals".to_owned())
        });
        Self {
            common,
            database,
            auth_service_url,
            auth_timeout,
            caller_cache_ttl,
            signer,
            identity,
            payment_service_url,
            payment_timeout,
            webhook_secret,
            flags,
            limits,
            sync,
            hostname,
            offer_max_points_per_sar,
            batches,
            events: outbox::EventSettings::from_env(env),
        }
    }
}
