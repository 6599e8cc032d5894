//! `auth-service`: serve (the default), migrate, wait-for-migrations or seed
//! (`server::Binary`), and housekeeping; `--help` says what the service is (its Cargo.toml
//! description).

use std::process::ExitCode;

use auth_service::{DEFAULT_PORT, SERVICE, config::Config, db, housekeeping, seed, startup};
use clap::Subcommand;
use server::{Binary, Command};

const BINARY: Binary = Binary::new(SERVICE, DEFAULT_PORT, db::MIGRATIONS);

#[derive(Subcommand)]
enum AuthCommand {
    #[command(flatten)]
    Common(Command),
    /// Delete the rows no rule reads any more: OTP events and client events older than two
    /// hours (the limits count one), login codes expired for more than 3 minutes. In batches
    /// of 1000, each its own transaction; safe to run from several places at once. Prints
    /// `table<TAB>rows removed` per table and records each table's run for the
    /// housekeeping_* gauges.
    #[command(after_help = ::housekeeping::EXIT_CODES)]
    Housekeeping,
}

fn main() -> ExitCode {
    match server::cli::parse::<AuthCommand>(clap::command!())
        .unwrap_or(AuthCommand::Common(Command::Serve))
    {
        AuthCommand::Common(command) => {
            BINARY.run(command, Config::from_env, startup::build, seed::load)
        }
        AuthCommand::Housekeeping => BINARY.with_database(async |database| {
            ::housekeeping::command(&database, housekeeping::RULES).await
        }),
    }
}
