//! The database: its URL (possibly several hosts), the pool's size and the statement cache
//! switch.

use super::{Env, Secret};

/// `DATABASE_URL`, `DATABASE_POOL_SIZE` and `DATABASE_STATEMENT_CACHE`.
///
/// `DATABASE_URL` may name several hosts
/// (`postgres://u@db1:5432,db2:5432/points?target_session_attrs=read-write`): a new
/// connection tries them in turn and takes the first that accepts writes, so after a
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
            url: Secret::new(url),
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
    use super::super::env;
    use super::*;

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
    fn a_host_list_and_the_statement_cache_switch_are_read() {
        let mut e = env(&[
            (
                "DATABASE_URL",
                "postgres://u:pw@127.0.0.1:5432,127.0.0.1:5433/points\
                 ?target_session_attrs=read-write",
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
}
