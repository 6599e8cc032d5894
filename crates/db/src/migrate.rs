//! Embedded migrations, run under a PostgreSQL advisory lock so that replicas (or migration
//! jobs) starting together take turns instead of racing on the same DDL.

use diesel::RunQueryDsl;
use diesel::migration::{Migration, MigrationSource};
use diesel::pg::Pg;
use diesel::sql_types::BigInt;
use diesel_async::AsyncPgConnection;
use diesel_async::async_connection_wrapper::AsyncConnectionWrapper;
use diesel_migrations::{EmbeddedMigrations, MigrationHarness};

use crate::PoolSettings;

/// The advisory lock key every `migrate` takes (one lock space per database).
pub const MIGRATION_LOCK_KEY: i64 = 0x006C_6F79_616C_7479; // "loyalty" in ASCII

/// One database's migrations, with the folder they were embedded from (tests hash it to
/// know when a template database is stale).
#[derive(Clone, Copy)]
pub struct Migrations {
    pub name: &'static str,
    pub embedded: &'static EmbeddedMigrations,
    pub source_dir: &'static str,
}

#[derive(Debug, thiserror::Error)]
pub enum MigrateError {
    #[error("cannot connect to the database: {0}")]
    Connect(#[from] diesel::ConnectionError),
    #[error("cannot take the migration lock: {0}")]
    Lock(diesel::result::Error),
    #[error("migration failed: {0}")]
    Migration(String),
    #[error("migration task failed: {0}")]
    Task(String),
}

/// Applies pending migrations and returns the names of those applied (empty when the
/// database was already current).
pub async fn run_migrations(
    settings: &PoolSettings,
    migrations: Migrations,
) -> Result<Vec<String>, MigrateError> {
    with_connection(settings, move |conn| {
        diesel::sql_query("SELECT pg_advisory_lock($1)")
            .bind::<BigInt, _>(MIGRATION_LOCK_KEY)
            .execute(conn)
            .map_err(MigrateError::Lock)?;
        let applied = conn
            .run_pending_migrations(Source(migrations.embedded))
            .map(|versions| versions.iter().map(ToString::to_string).collect::<Vec<_>>())
            .map_err(|e| MigrateError::Migration(e.to_string()));
        // Closing the connection would release the lock too; unlock explicitly so that a
        // pooled or reused connection can never keep it.
        let _ = diesel::sql_query("SELECT pg_advisory_unlock($1)")
            .bind::<BigInt, _>(MIGRATION_LOCK_KEY)
            .execute(conn);
        applied
    })
    .await
}

/// The embedded migrations not yet applied to the database of `settings` (names, oldest
/// first). Reads only: Kubernetes init containers use it to hold a rollout until the
/// migration Job has run.
pub async fn pending_migrations(
    settings: &PoolSettings,
    migrations: Migrations,
) -> Result<Vec<String>, MigrateError> {
    with_connection(settings, move |conn| {
        conn.pending_migrations(Source(migrations.embedded))
            .map(|pending| pending.iter().map(|m| m.name().to_string()).collect())
            .map_err(|e| MigrateError::Migration(e.to_string()))
    })
    .await
}

/// Runs `work` with a synchronous connection to the database of `settings` (made as every
/// connection is, `crate::connect`) on a blocking thread: diesel's migration harness is
/// synchronous, and running it on an async worker would stall (or, under actix, panic).
async fn with_connection<T: Send + 'static>(
    settings: &PoolSettings,
    work: impl FnOnce(&mut AsyncConnectionWrapper<AsyncPgConnection>) -> Result<T, MigrateError>
    + Send
    + 'static,
) -> Result<T, MigrateError> {
    let conn = crate::connect(settings).await?;
    tokio::task::spawn_blocking(move || {
        let mut conn = AsyncConnectionWrapper::<AsyncPgConnection>::from(conn);
        work(&mut conn)
    })
    .await
    .map_err(|e| MigrateError::Task(e.to_string()))?
}

/// `EmbeddedMigrations` is neither `Clone` nor implemented for references; this lets a
/// `Migrations` hold a `&'static` to it.
struct Source(&'static EmbeddedMigrations);

impl MigrationSource<Pg> for Source {
    fn migrations(&self) -> diesel::migration::Result<Vec<Box<dyn Migration<Pg>>>> {
        MigrationSource::<Pg>::migrations(self.0)
    }
}
