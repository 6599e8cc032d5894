//! The database layer every service shares: one connection pool per process, the embedded
//! migrations run under an advisory lock, and (feature `testing`) a database per test.

mod connect;
mod failure;
pub mod leases;
mod migrate;
mod pool;
mod reply_deadline;
mod service_error;
mod sql_spans;
#[cfg(feature = "testing")]
pub mod testing;
mod text_enum;

pub use connect::{
    Connector, KEEPALIVE_IDLE, KEEPALIVE_INTERVAL, KEEPALIVE_RETRIES, TCP_USER_TIMEOUT, connect,
};
pub use failure::{BUSY_ANSWER, BUSY_MESSAGE, Failure};
pub use migrate::{MIGRATION_LOCK_KEY, Migrations, pending_migrations, run_migrations};
pub use pool::{
    BuildError, CHECK_TIMEOUT, Conn, PING_AFTER_IDLE, Pool, PoolError, PoolSettings, PoolStatus,
    build_pool, check_ready,
};

pub use diesel::result::Error as DieselError;
pub use diesel_async::AsyncPgConnection;

/// Whether `url` is a PostgreSQL URL the connection can use: `postgres://` or
/// `postgresql://`, one host or several (`host1:5432,host2:5432`), with tokio-postgres's
/// options such as `target_session_attrs=read-write`. (`url::Url` refuses a host list.)
pub fn is_postgres_url(url: &str) -> bool {
    (url.starts_with("postgres://") || url.starts_with("postgresql://"))
        && url.parse::<tokio_postgres::Config>().is_ok()
}

/// Replaces the database name of a PostgreSQL URL, keeping host, user and options.
pub fn with_database(url: &str, database: &str) -> Result<String, url::ParseError> {
    let mut parsed = url::Url::parse(url)?;
    parsed.set_path(&format!("/{database}"));
    Ok(parsed.into())
}

/// Quotes an identifier for SQL text (database names cannot be bind parameters).
pub fn quote_ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn with_database_keeps_everything_but_the_name() {
        assert_eq!(
            with_database(
                "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable",
                "auth"
            )
            .unwrap(),
            "postgres://postgres@127.0.0.1:5432/auth?sslmode=disable"
        );
    }

    #[test]
    fn a_host_list_with_its_session_attribute_is_a_postgres_url() {
        assert!(is_postgres_url(
            "postgres://postgres@127.0.0.1:5432,127.0.0.1:5433/points?target_session_attrs=read-write"
        ));
        assert!(is_postgres_url("postgresql://u:p@db/auth"));
        assert!(!is_postgres_url("mysql://u@db/auth"));
        assert!(!is_postgres_url("host=db user=u dbname=auth"));
        assert!(!is_postgres_url(
            "postgres://u@db/auth?target_session_attrs=whatever"
        ));
    }

    #[test]
    fn quote_ident_doubles_quotes() {
        assert_eq!(quote_ident(r#"a"b"#), r#""a""b""#);
    }
}
