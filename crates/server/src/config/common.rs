//! What every service reads: its environment, address, connection limits, logs and traces.

use std::net::SocketAddr;

use telemetry::{LogFormat, TelemetryConfig};

use super::{Env, HttpLimits};

/// `APP_ENV`. Production is the default: a binary started with no environment must not
/// show stack traces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AppEnv {
    Development,
    Production,
}

impl AppEnv {
    /// Raw error text and `stack` appear in answers only outside production.
    pub fn shows_internals(self) -> bool {
        self == AppEnv::Development
    }
}

/// What every service reads: environment, address, connection limits, logs and traces.
#[derive(Debug, Clone)]
pub struct CommonConfig {
    pub app_env: AppEnv,
    pub bind_addr: SocketAddr,
    /// `HTTP_WORKERS`: worker threads; binary default the number of CPUs.
    pub workers: usize,
    /// The `HTTP_*` limits on connections and slow clients.
    pub http: HttpLimits,
    pub telemetry: TelemetryConfig,
}

impl CommonConfig {
    /// `APP_ENV`, `BIND_ADDR`, `HTTP_WORKERS`, the [`HttpLimits`] variables, `RUST_LOG`,
    /// `LOG_FORMAT`, `OTEL_EXPORTER_OTLP_ENDPOINT`.
    pub fn from_env(env: &mut Env, service_name: &'static str, default_port: u16) -> Self {
        let app_env = env.one_of(
            "APP_ENV",
            AppEnv::Production,
            &[
                ("development", AppEnv::Development),
                ("production", AppEnv::Production),
            ],
        );
        let default_addr = SocketAddr::from(([127, 0, 0, 1], default_port));
        let bind_addr = env.parse_or("BIND_ADDR", default_addr, |s| {
            s.parse()
                .map_err(|_| "expected host:port, e.g. 0.0.0.0:8081".to_owned())
        });
        let cpus = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(2) as u64;
        let workers = env.int_or("HTTP_WORKERS", cpus, 1..=256) as usize;
        let http = HttpLimits::from_env(env);
        let log_format = env.one_of(
            "LOG_FORMAT",
            LogFormat::Json,
            &[("json", LogFormat::Json), ("pretty", LogFormat::Pretty)],
        );
        let log_filter = env
            .optional("RUST_LOG")
            .unwrap_or_else(|| "info".to_owned());
        let otlp_endpoint = env.url("OTEL_EXPORTER_OTLP_ENDPOINT");
        Self {
            app_env,
            bind_addr,
            workers,
            http,
            telemetry: TelemetryConfig {
                service_name,
                log_format,
                log_filter,
                otlp_endpoint,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{DatabaseConfig, env};
    use super::*;

    #[test]
    fn every_problem_is_reported_once() {
        let mut e = env(&[
            ("DATABASE_URL", "mysql://x"),
            ("APP_ENV", "staging"),
            ("DATABASE_POOL_SIZE", "1"),
        ]);
        let common = CommonConfig::from_env(&mut e, "test", 1);
        let db = DatabaseConfig::from_env(&mut e);
        let err = e.finish((common, db)).unwrap_err();
        assert_eq!(err.0.len(), 3, "{err}");
        assert!(err.0[0].starts_with("APP_ENV="));
        assert!(err.0[1].starts_with("DATABASE_URL is invalid"));
        assert!(err.0[2].starts_with("DATABASE_POOL_SIZE="));
    }

    #[test]
    fn defaults_apply_when_unset() {
        let mut e = env(&[("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/auth")]);
        let common = CommonConfig::from_env(&mut e, "auth-service", 8081);
        let db = DatabaseConfig::from_env(&mut e);
        let (common, db) = e.finish((common, db)).unwrap();
        assert_eq!(common.app_env, AppEnv::Production);
        assert_eq!(common.bind_addr.to_string(), "127.0.0.1:8081");
        assert_eq!(db.pool_size, 10);
        assert!(db.statement_cache);
        assert_eq!(common.telemetry.otlp_endpoint, None);
    }
}
