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
    /// Load this service's sections of a JSON fixture file (upserts; safe to run twice).
    Seed {
        /// The fixture file, e.g. deploy/fixtures/demo.json.
        file: PathBuf,
    },
}
