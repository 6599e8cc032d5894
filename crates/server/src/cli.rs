//! The subcommands every service binary has.

use std::path::PathBuf;

use clap::Subcommand;

#[derive(Debug, Clone, Subcommand, Default)]
pub enum Command {
    /// Serve HTTP (the default).
    #[default]
    Serve,
    /// Apply pending database migrations under an advisory lock, then exit.
    Migrate,
    /// Wait until every embedded migration has been applied (by `migrate`, e.g. a
    /// Kubernetes Job), then exit 0; exit 1 when `--timeout-secs` passes first.
    WaitForMigrations {
        #[arg(long, default_value_t = 600)]
        timeout_secs: u64,
    },
    /// Load this service's sections of a JSON fixture file (upserts; safe to run twice).
    Seed {
        /// The fixture file, e.g. deploy/fixtures/demo.json.
        file: PathBuf,
    },
}
