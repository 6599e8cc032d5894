//! The part of a service's configuration that every API test starts it with, so that each
//! service's test helpers write only what is theirs (`Config { common: config::common(..),
//! database: config::database(..), ..}`).

use server::{AppEnv, CommonConfig, DatabaseConfig, HttpLimits, Secret};
use telemetry::{LogFormat, TelemetryConfig};

/// Development, two workers, the default HTTP limits, human-readable logs at `warn` (a
/// failing test's output stays readable) and no trace export. The address is never bound:
/// the test hands the server a listener of its own on port 0. Change a field with struct
/// update syntax: `CommonConfig { workers: 1, ..common("auth-service") }`.
pub fn common(service_name: &'static str) -> CommonConfig {
    CommonConfig {
        app_env: AppEnv::Development,
        bind_addr: ([127, 0, 0, 1], 0).into(),
        workers: 2,
        http: HttpLimits::default(),
        telemetry: TelemetryConfig {
            service_name,
            log_format: LogFormat::Pretty,
            log_filter: "warn".into(),
            otlp_endpoint: None,
        },
    }
}

/// A pool of `pool_size` connections to the test's own database, with the statement cache
/// on (the default; only PgBouncer in transaction mode needs it off).
pub fn database(url: &str, pool_size: usize) -> DatabaseConfig {
    DatabaseConfig {
        url: Secret::new(url),
        pool_size,
        statement_cache: true,
    }
}
