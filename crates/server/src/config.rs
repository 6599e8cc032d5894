//! Configuration from environment variables, read once at start into typed structs.
//!
//! [`Env`] collects every problem instead of stopping at the first, and names the variable
//! in each, so that a bad deployment shows all its mistakes in one go, one line each.
//! Tests build config structs directly (or an [`Env`] from pairs) and never touch the
//! process environment.

use std::collections::HashMap;
use std::fmt;
use std::net::SocketAddr;
use std::time::Duration;

use telemetry::{LogFormat, TelemetryConfig};

/// Every problem found, one per line, each naming its variable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError(pub Vec<String>);

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.join("\n"))
    }
}

impl std::error::Error for ConfigError {}

/// A secret value: never in `Debug` output or logs.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(<redacted>)")
    }
}

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

/// Reads variables and records what is wrong with them.
pub struct Env {
    vars: HashMap<String, String>,
    errors: Vec<String>,
}

impl Env {
    pub fn from_process() -> Self {
        Self::from_vars(std::env::vars())
    }

    pub fn from_vars<K: Into<String>, V: Into<String>>(
        vars: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        Self {
            vars: vars
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
            errors: Vec::new(),
        }
    }

    /// The raw value; an empty value counts as unset.
    pub fn optional(&self, name: &str) -> Option<String> {
        self.vars.get(name).filter(|v| !v.is_empty()).cloned()
    }

    /// A value that must be set.
    pub fn required(&mut self, name: &str) -> String {
        match self.optional(name) {
            Some(v) => v,
            None => {
                self.errors.push(format!("{name} is required but not set"));
                String::new()
            }
        }
    }

    /// A value read by `parse`, or `default` when unset or invalid. `parse` explains what it
    /// expected.
    pub fn parse_or<T>(
        &mut self,
        name: &str,
        default: T,
        parse: impl Fn(&str) -> Result<T, String>,
    ) -> T {
        self.read(name, parse, true).unwrap_or(default)
    }

    /// A secret value read by `parse`, or `None` when unset or invalid; an invalid one is not
    /// repeated in the error, which goes to the log.
    pub fn secret_parse<T>(
        &mut self,
        name: &str,
        parse: impl Fn(&str) -> Result<T, String>,
    ) -> Option<T> {
        self.read(name, parse, false)
    }

    fn read<T>(
        &mut self,
        name: &str,
        parse: impl Fn(&str) -> Result<T, String>,
        show: bool,
    ) -> Option<T> {
        let raw = self.optional(name)?;
        parse(&raw)
            .map_err(|expected| {
                self.errors.push(if show {
                    format!("{name}={raw:?} is invalid: {expected}")
                } else {
                    format!("{name} is invalid: {expected}")
                })
            })
            .ok()
    }

    /// One of `choices`, by its name, or `default` when unset.
    pub fn one_of<T: Copy>(&mut self, name: &str, default: T, choices: &[(&str, T)]) -> T {
        self.parse_or(name, default, |raw| {
            choices
                .iter()
                .find(|(choice, _)| *choice == raw)
                .map(|(_, value)| *value)
                .ok_or_else(|| {
                    let names: Vec<&str> = choices.iter().map(|(choice, _)| *choice).collect();
                    let expected = match names.split_last() {
                        Some((last, rest)) if !rest.is_empty() => {
                            format!("{} or {last}", rest.join(", "))
                        }
                        _ => names.concat(),
                    };
                    format!("expected {expected}, got {raw:?}")
                })
        })
    }

    /// An integer in `range`, or `default` when unset.
    pub fn int_or(
        &mut self,
        name: &str,
        default: u64,
        range: std::ops::RangeInclusive<u64>,
    ) -> u64 {
        let (lo, hi) = (*range.start(), *range.end());
        self.parse_or(name, default, |raw| {
            raw.parse::<u64>()
                .ok()
                .filter(|v| range.contains(v))
                .ok_or_else(|| format!("expected an integer from {lo} to {hi}"))
        })
    }

    /// A switch that is on only for the exact text `true` (the spec's rule for flags).
    pub fn flag(&self, name: &str) -> bool {
        self.optional(name).as_deref() == Some("true")
    }

    /// A required secret. In production a development secret (the `dev-only` marker that
    /// `make run` uses) or a short one refuses to start.
    pub fn secret(&mut self, name: &str, app_env: AppEnv) -> Secret {
        let value = self.required(name);
        if !value.is_empty()
            && app_env == AppEnv::Production
            && (value.contains("dev-only") || value.len() < 32)
        {
            self.errors.push(format!(
                "{name} holds a development secret; production needs at least 32 random characters"
            ));
        }
        Secret(value)
    }

    /// A `http(s)://` URL, or `None` when unset. An invalid one is reported by its scheme and
    /// host only, like `DATABASE_URL`: its user info, path or query may hold a credential
    /// (`SMS_HTTP_URL` may carry the provider's key), and the error goes to the log.
    pub fn url(&mut self, name: &str) -> Option<String> {
        let raw = self.optional(name)?;
        let shown = match url::Url::parse(&raw) {
            Ok(u) if u.scheme() == "http" || u.scheme() == "https" => {
                return Some(raw.trim_end_matches('/').to_owned());
            }
            Ok(u) => format!("{}://{}", u.scheme(), u.host_str().unwrap_or_default()),
            // The parser's reason names no part of the value ("relative URL without a base").
            Err(e) => e.to_string(),
        };
        self.errors.push(format!(
            "{name} is invalid ({shown}): expected an http:// or https:// URL"
        ));
        None
    }

    /// Records a problem found by the caller's own checks.
    pub fn error(&mut self, message: impl Into<String>) {
        self.errors.push(message.into());
    }

    /// `value` if nothing was wrong, else every problem found.
    pub fn finish<T>(self, value: T) -> Result<T, ConfigError> {
        if self.errors.is_empty() {
            Ok(value)
        } else {
            Err(ConfigError(self.errors))
        }
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

/// How many connections a service holds and how long a slow client may hold one
/// (`docs/decisions.md`, "Abuse limits"). Applied by [`crate::run`] to actix's server and by
/// the app's body middleware.
///
/// | Variable | Default | Bounds | Meaning |
/// |---|---|---|---|
/// | `HTTP_MAX_CONNECTIONS` | 512 | 1 to 100 000 | open connections per process, split evenly over the workers (at least one each); past it, new connections wait in the listen backlog |
/// | `HTTP_BACKLOG` | 1024 | 16 to 65 535 | connections the kernel queues while the process accepts none (capped by `net.core.somaxconn`) |
/// | `HTTP_HEAD_TIMEOUT_MS` | 5000 | 100 to 60 000 | a new connection's first request head must arrive whole within this, else 408 and close |
/// | `HTTP_BODY_TIMEOUT_MS` | 10000 | 100 to 120 000 | a request body must arrive whole within this from its head, else 408 in the route's envelope and close |
/// | `HTTP_KEEP_ALIVE_SECS` | 75 | 0 to 3600 | an idle keep-alive connection is closed after this (0: no keep-alive) |
/// | `HTTP_DISCONNECT_TIMEOUT_MS` | 1000 | 0 to 30 000 | how long a closing connection waits for the client's side of the shutdown |
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HttpLimits {
    pub max_connections: usize,
    pub backlog: u32,
    /// actix's `client_request_timeout`.
    pub head_timeout: Duration,
    /// The body middleware's read deadline (`envelope::body_limits`).
    pub body_timeout: Duration,
    /// actix's `keep_alive`; zero turns keep-alive off.
    pub keep_alive: Duration,
    /// actix's `client_disconnect_timeout`.
    pub disconnect_timeout: Duration,
}

impl Default for HttpLimits {
    fn default() -> Self {
        Self {
            max_connections: 512,
            backlog: 1024,
            head_timeout: Duration::from_millis(5000),
            body_timeout: Duration::from_millis(10_000),
            keep_alive: Duration::from_secs(75),
            disconnect_timeout: Duration::from_millis(1000),
        }
    }
}

impl HttpLimits {
    /// `HTTP_MAX_CONNECTIONS`, `HTTP_BACKLOG`, `HTTP_HEAD_TIMEOUT_MS`, `HTTP_BODY_TIMEOUT_MS`,
    /// `HTTP_KEEP_ALIVE_SECS`, `HTTP_DISCONNECT_TIMEOUT_MS`.
    pub fn from_env(env: &mut Env) -> Self {
        let d = Self::default();
        let ms = |d: Duration| d.as_millis() as u64;
        Self {
            max_connections: env.int_or(
                "HTTP_MAX_CONNECTIONS",
                d.max_connections as u64,
                1..=100_000,
            ) as usize,
            backlog: env.int_or("HTTP_BACKLOG", u64::from(d.backlog), 16..=65_535) as u32,
            head_timeout: Duration::from_millis(env.int_or(
                "HTTP_HEAD_TIMEOUT_MS",
                ms(d.head_timeout),
                100..=60_000,
            )),
            body_timeout: Duration::from_millis(env.int_or(
                "HTTP_BODY_TIMEOUT_MS",
                ms(d.body_timeout),
                100..=120_000,
            )),
            keep_alive: Duration::from_secs(env.int_or(
                "HTTP_KEEP_ALIVE_SECS",
                d.keep_alive.as_secs(),
                0..=3600,
            )),
            disconnect_timeout: Duration::from_millis(env.int_or(
                "HTTP_DISCONNECT_TIMEOUT_MS",
                ms(d.disconnect_timeout),
                0..=30_000,
            )),
        }
    }

    /// actix's limit is per worker: `max_connections` split evenly, at least one each.
    pub fn connections_per_worker(&self, workers: usize) -> usize {
        (self.max_connections / workers.max(1)).max(1)
    }
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

/// `DATABASE_URL`, `DATABASE_POOL_SIZE` and `DATABASE_STATEMENT_CACHE`.
///
/// `DATABASE_URL` may name several hosts (`postgres://u@db1:5432,db2:5432/points?target_session_attrs=read-write`):
/// a new connection tries them in turn and takes the first that accepts writes, so after a
/// failover the pool reconnects to the promoted standby.
///
/// `DATABASE_STATEMENT_CACHE` is `true` (the default) or `false`; `false` when `DATABASE_URL`
/// points at PgBouncer in transaction mode, which cannot carry prepared statements from one
/// transaction to the next (`db::PoolSettings::statement_cache`).
#[derive(Debug, Clone)]
pub struct DatabaseConfig {
    pub url: Secret,
    pub pool_size: usize,
    pub statement_cache: bool,
}

impl DatabaseConfig {
    pub const DEFAULT_POOL_SIZE: u64 = 10;

    pub fn from_env(env: &mut Env) -> Self {
        let url = env.required("DATABASE_URL");
        if !url.is_empty() && !db::is_postgres_url(&url) {
            // The URL may hold a password: do not echo it.
            env.error("DATABASE_URL is invalid: expected postgres://user@host:port/database");
        }
        let pool_size =
            env.int_or("DATABASE_POOL_SIZE", Self::DEFAULT_POOL_SIZE, 2..=1000) as usize;
        let statement_cache = env.parse_or("DATABASE_STATEMENT_CACHE", true, |raw| match raw {
            "true" => Ok(true),
            "false" => Ok(false),
            _ => Err("expected true or false".to_owned()),
        });
        Self {
            url: Secret(url),
            pool_size,
            statement_cache,
        }
    }

    pub fn pool_settings(&self) -> db::PoolSettings {
        db::PoolSettings {
            statement_cache: self.statement_cache,
            ..db::PoolSettings::new(self.url.expose(), self.pool_size)
        }
    }

    /// The connection of a command-line subcommand (`migrate`, `wait-for-migrations`,
    /// `seed`, a service's own tools): the same URL and statement cache switch as the pool,
    /// without the pool's statement and lock timeouts (`db::PoolSettings::one_off`).
    pub fn tool_settings(&self) -> db::PoolSettings {
        db::PoolSettings {
            statement_cache: self.statement_cache,
            ..db::PoolSettings::one_off(self.url.expose())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> Env {
        Env::from_vars(pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())))
    }

    #[test]
    fn an_invalid_url_is_reported_by_scheme_and_host_only() {
        let secret_parts = ["provider-key-123", "user", "hunter2", "/send/path"];
        let cases = [
            (
                "ftp://user:hunter2@sms.example.com/send/path?key=provider-key-123",
                "SMS_HTTP_URL is invalid (ftp://sms.example.com): expected an http:// or https:// URL",
            ),
            (
                "sms.example.com/send/path?key=provider-key-123",
                "SMS_HTTP_URL is invalid (relative URL without a base): expected an http:// or https:// URL",
            ),
            (
                "https://user:hunter2@sms.example.com:99999/send/path?key=provider-key-123",
                "SMS_HTTP_URL is invalid (invalid port number): expected an http:// or https:// URL",
            ),
        ];
        for (raw, expected) in cases {
            let mut e = env(&[("SMS_HTTP_URL", raw)]);
            assert_eq!(e.url("SMS_HTTP_URL"), None);
            let message = e.finish(()).unwrap_err().to_string();
            assert_eq!(message, expected);
            for part in secret_parts {
                assert!(!message.contains(part), "{message}");
            }
        }
        let mut e = env(&[("SMS_HTTP_URL", "https://sms.example.com/send?key=k/")]);
        assert_eq!(
            e.url("SMS_HTTP_URL").as_deref(),
            Some("https://sms.example.com/send?key=k")
        );
    }

    #[test]
    fn a_choice_is_read_by_its_name_and_a_wrong_one_lists_the_names() {
        let choices = [("a", 1), ("b", 2), ("c", 3)];
        let mut e = env(&[("PICK", "b"), ("WRONG", "d")]);
        assert_eq!(e.one_of("PICK", 0, &choices), 2);
        assert_eq!(e.one_of("UNSET", 0, &choices), 0);
        assert_eq!(e.one_of("WRONG", 0, &choices), 0);
        assert_eq!(
            e.finish(()).unwrap_err().to_string(),
            "WRONG=\"d\" is invalid: expected a, b or c, got \"d\""
        );
    }

    #[test]
    fn an_invalid_secret_value_is_not_repeated() {
        let mut e = env(&[("CODE", "12a4")]);
        let parsed = e.secret_parse("CODE", |_| Err::<u8, _>("expected 4 digits".into()));
        assert_eq!(parsed, None);
        assert_eq!(
            e.finish(()).unwrap_err().to_string(),
            "CODE is invalid: expected 4 digits"
        );
    }

    #[test]
    fn bad_pool_size_names_the_variable_in_one_line() {
        let mut e = env(&[
            ("DATABASE_URL", "postgres://postgres@127.0.0.1/points"),
            ("DATABASE_POOL_SIZE", "abc"),
        ]);
        let db = DatabaseConfig::from_env(&mut e);
        let err = e.finish(db).unwrap_err();
        assert_eq!(
            err.to_string(),
            r#"DATABASE_POOL_SIZE="abc" is invalid: expected an integer from 2 to 1000"#
        );
    }

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
    fn a_host_list_and_the_statement_cache_switch_are_read() {
        let mut e = env(&[
            (
                "DATABASE_URL",
                "postgres://u:pw@127.0.0.1:5432,127.0.0.1:5433/points?target_session_attrs=read-write",
            ),
            ("DATABASE_STATEMENT_CACHE", "false"),
        ]);
        let db = DatabaseConfig::from_env(&mut e);
        let db = e.finish(db).unwrap();
        assert!(!db.statement_cache);
        assert!(!db.pool_settings().statement_cache);
        // The subcommands (migrate, seed, audit, ...) connect with the same switch: through
        // PgBouncer 1.18 a named statement fails.
        let tool = db.tool_settings();
        assert!(!tool.statement_cache);
        assert_eq!(tool.url, db.pool_settings().url);
        // ... and without the pool's timeouts: a migration or an audit may run long.
        assert!(tool.statement_timeout.is_zero() && tool.lock_timeout.is_zero());

        let mut e = env(&[
            ("DATABASE_URL", "postgres://u@db/points"),
            ("DATABASE_STATEMENT_CACHE", "off"),
        ]);
        let db = DatabaseConfig::from_env(&mut e);
        assert_eq!(
            e.finish(db).unwrap_err().0,
            [r#"DATABASE_STATEMENT_CACHE="off" is invalid: expected true or false"#]
        );
    }

    #[test]
    fn missing_url_is_required() {
        let mut e = env(&[]);
        let db = DatabaseConfig::from_env(&mut e);
        assert_eq!(
            e.finish(db).unwrap_err().0,
            ["DATABASE_URL is required but not set"]
        );
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

    #[test]
    fn http_limits_have_defaults_bounds_and_names() {
        let mut e = env(&[]);
        let common = CommonConfig::from_env(&mut e, "test", 1);
        assert_eq!(common.http, HttpLimits::default());
        assert_eq!(common.http.max_connections, 512);
        assert_eq!(common.http.keep_alive, Duration::from_secs(75));

        let mut e = env(&[
            ("HTTP_MAX_CONNECTIONS", "2"),
            ("HTTP_BACKLOG", "64"),
            ("HTTP_HEAD_TIMEOUT_MS", "250"),
            ("HTTP_BODY_TIMEOUT_MS", "300"),
            ("HTTP_KEEP_ALIVE_SECS", "0"),
            ("HTTP_DISCONNECT_TIMEOUT_MS", "0"),
        ]);
        let http = HttpLimits::from_env(&mut e);
        assert!(e.finish(()).is_ok());
        assert_eq!(
            http,
            HttpLimits {
                max_connections: 2,
                backlog: 64,
                head_timeout: Duration::from_millis(250),
                body_timeout: Duration::from_millis(300),
                keep_alive: Duration::ZERO,
                disconnect_timeout: Duration::ZERO,
            }
        );

        // No limit can be switched off or made unbounded.
        let mut e = env(&[
            ("HTTP_MAX_CONNECTIONS", "0"),
            ("HTTP_BACKLOG", "1"),
            ("HTTP_HEAD_TIMEOUT_MS", "0"),
            ("HTTP_BODY_TIMEOUT_MS", "1000000"),
            ("HTTP_KEEP_ALIVE_SECS", "-1"),
            ("HTTP_DISCONNECT_TIMEOUT_MS", "x"),
        ]);
        HttpLimits::from_env(&mut e);
        let err = e.finish(()).unwrap_err();
        assert_eq!(err.0.len(), 6, "{err}");
        assert_eq!(
            err.0[0],
            r#"HTTP_MAX_CONNECTIONS="0" is invalid: expected an integer from 1 to 100000"#
        );
    }

    #[test]
    fn connections_are_split_over_the_workers() {
        let limits = |max_connections| HttpLimits {
            max_connections,
            ..HttpLimits::default()
        };
        assert_eq!(limits(512).connections_per_worker(1), 512);
        assert_eq!(limits(512).connections_per_worker(3), 170);
        assert_eq!(limits(2).connections_per_worker(4), 1);
    }

    #[test]
    fn flags_are_on_only_for_exact_true() {
        let e = env(&[("A", "true"), ("B", "TRUE"), ("C", "1"), ("D", " true")]);
        assert!(e.flag("A"));
        assert!(!e.flag("B") && !e.flag("C") && !e.flag("D") && !e.flag("E"));
    }

    #[test]
    fn production_refuses_development_secrets() {
        let mut e = env(&[("S", "dev-only-secret-please-change-me-000000")]);
        e.secret("S", AppEnv::Production);
        assert_eq!(e.finish(()).unwrap_err().0.len(), 1);

        let mut e = env(&[("S", "short")]);
        e.secret("S", AppEnv::Production);
        assert!(e.finish(()).is_err());

        let mut e = env(&[("S", "dev-only-secret")]);
        let s = e.secret("S", AppEnv::Development);
        assert_eq!(format!("{s:?}"), "Secret(<redacted>)");
        assert!(e.finish(()).is_ok());
    }
}
