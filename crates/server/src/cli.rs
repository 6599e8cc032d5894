//! A service binary's command line: the subcommands every service has, and the reading of
//! the line itself.

use std::path::PathBuf;

use clap::{Args, FromArgMatches, Subcommand};

/// The subcommand on a binary's command line; `None` when none was given (serve). `C` is
/// [`Command`], or the service's own enum that flattens it. `command` is the binary's
/// `clap::command!()`: its name, version and description (`--help`) from its Cargo.toml.
/// A bad line prints clap's message and exits, as clap does.
pub fn parse<C: Subcommand>(command: clap::Command) -> Option<C> {
    let matches = Line::<C>::augment_args(command).get_matches();
    Line::<C>::from_arg_matches(&matches)
        .unwrap_or_else(|e| e.exit())
        .command
}

#[derive(Args)]
struct Line<C: Subcommand> {
    #[command(subcommand)]
    command: Option<C>,
}

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
