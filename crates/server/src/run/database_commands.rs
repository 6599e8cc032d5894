//! The subcommands that work on a service's database: `migrate`, `wait-for-migrations`,
//! `seed`, and a service's own tools ([`Binary::with_database`]).

use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use diesel_async::{AsyncConnection, AsyncPgConnection};

use super::Binary;

/// A service's fixture loader: upserts its sections of the fixture inside the transaction it
/// is given and reports one line per section for the log and every row it refused (a
/// refused row is skipped, never the file: `crate::seed`). An error ends the load and
/// nothing is written.
pub type SeedFn =
    for<'c> fn(&'c mut AsyncPgConnection, &'c serde_json::Value) -> crate::seed::SeedFuture<'c>;

impl Binary {
    /// `migrate`: applies pending migrations under the advisory lock.
    pub fn migrate(&self) -> ExitCode {
        let migrations = self.migrations;
        self.with_database(async move |database| {
            let applied = db::run_migrations(&database, migrations)
                .await
                .map_err(|e| e.to_string())?;
            tracing::info!(db.name = migrations.name, applied = ?applied, "migrations are up to date");
            Ok(())
        })
    }

    /// A service's own subcommand that works on its database: reads the `DATABASE_*`
    /// variables (and the common ones, for logs), runs `work` with the settings a tool's
    /// connection is made with ([`DatabaseConfig::tool_settings`], for `db::connect`), exits
    /// 1 with its error.
    pub fn with_database<F, Fut>(&self, work: F) -> ExitCode
    where
        F: FnOnce(db::PoolSettings) -> Fut,
        Fut: std::future::Future<Output = Result<(), String>>,
    {
        self.with_database_code(|database| {
            let work = work(database);
            async move { work.await.map(|()| ExitCode::SUCCESS) }
        })
    }

    /// [`Self::with_database`] for work that chooses its own exit code on success (a
    /// command that refuses its arguments only once it has asked the database).
    pub fn with_database_code<F, Fut>(&self, work: F) -> ExitCode
    where
        F: FnOnce(db::PoolSettings) -> Fut,
        Fut: std::future::Future<Output = Result<ExitCode, String>>,
    {
        let Some((common, database)) = self.database_only() else {
            return ExitCode::from(2);
        };
        self.with_runtime_code(&common, work(database.tool_settings()))
    }

    /// `wait-for-migrations`: polls until no embedded migration is pending. A database that
    /// cannot be reached yet counts as "not yet", so the init container also waits out a
    /// database that starts after it.
    pub fn wait_for_migrations(&self, timeout: Duration) -> ExitCode {
        let migrations = self.migrations;
        self.with_database(async move |database| {
            let deadline = tokio::time::Instant::now() + timeout;
            loop {
                let last = match db::pending_migrations(&database, migrations).await {
                    Ok(pending) if pending.is_empty() => {
                        tracing::info!(db.name = migrations.name, "migrations are up to date");
                        return Ok(());
                    }
                    Ok(pending) => format!("pending migrations: {}", pending.join(", ")),
                    Err(e) => e.to_string(),
                };
                if tokio::time::Instant::now() >= deadline {
                    return Err(format!(
                        "gave up after {} s waiting for the {} migrations ({last})",
                        timeout.as_secs(),
                        migrations.name
                    ));
                }
                tracing::info!(db.name = migrations.name, "waiting for migrations: {last}");
                tokio::time::sleep(Duration::from_secs(2)).await;
            }
        })
    }

    /// `seed FILE`: loads this service's sections of a fixture in one transaction. Rows the
    /// loader refused are listed on stderr, one line each, after the valid rows are
    /// committed; the exit code is then [`crate::seed::EXIT_ROWS_REJECTED`], so a script
    /// notices. A file that cannot be read, or a failure of the database, writes nothing
    /// and exits 1.
    pub fn seed(&self, file: &Path, seed: SeedFn) -> ExitCode {
        let Some((common, database)) = self.database_only() else {
            return ExitCode::from(2);
        };
        let file = file.to_owned();
        let name = self.name;
        self.with_runtime_code(&common, async move {
            let text = std::fs::read_to_string(&file)
                .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
            let fixture: serde_json::Value = serde_json::from_str(&text)
                .map_err(|e| format!("{} is not valid JSON: {e}", file.display()))?;
            if !fixture.is_object() {
                return Err(format!(
                    "{} must hold a JSON object of sections",
                    file.display()
                ));
            }
            let mut conn = db::connect(&database.tool_settings())
                .await
                .map_err(|e| format!("cannot connect to the database: {e}"))?;
            let report = conn
                .transaction::<_, anyhow::Error, _>(async |conn| seed(conn, &fixture).await)
                .await
                .map_err(|e| {
                    format!(
                        "seeding {} failed, nothing was written: {e:#}",
                        file.display()
                    )
                })?;
            for line in &report.lines {
                tracing::info!(fixture = %file.display(), "{line}");
            }
            if report.rejected.is_empty() {
                return Ok(ExitCode::SUCCESS);
            }
            for rejected in &report.rejected {
                tracing::error!(fixture = %file.display(), "row rejected: {rejected}");
                eprintln!("{name}: {}: rejected {rejected}", file.display());
            }
            eprintln!(
                "{name}: {}: {} row(s) rejected and skipped; the other rows were loaded",
                file.display(),
                report.rejected.len()
            );
            Ok(ExitCode::from(crate::seed::EXIT_ROWS_REJECTED))
        })
    }
}
