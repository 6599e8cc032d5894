//! `order-service`: serve (the default), migrate, wait-for-migrations or seed
//! (`server::Binary`), and housekeeping of the catalog database's per-request rows; `--help`
//! says what the service is (its Cargo.toml description).

use std::process::ExitCode;

use clap::Subcommand;
use order_service::{DEFAULT_PORT, SERVICE, config::Config, housekeeping, seed, startup};
use server::{Binary, Command};

const BINARY: Binary = Binary::new(SERVICE, DEFAULT_PORT, catalog_db::MIGRATIONS);

#[derive(Subcommand)]
enum OrderCommand {
    #[command(flatten)]
    Common(Command),
    /// Delete the wrong gift-card guesses older than two hours (the limits count one). In
    /// batches of 1000, each its own transaction; safe to run from several places at once.
    /// Prints `table<TAB>rows removed` per table and records each table's run for the
    /// housekeeping_* gauges.
    #[command(after_help = ::housekeeping::EXIT_CODES)]
    Housekeeping,
}

fn main() -> ExitCode {
    match server::cli::parse::<OrderCommand>(clap::command!())
        .unwrap_or(OrderCommand::Common(Command::Serve))
    {
        OrderCommand::Common(command) => {
            BINARY.run(command, Config::from_env, startup::build, seed::load)
        }
        OrderCommand::Housekeeping => BINARY.with_database(async |database| {
            ::housekeeping::command(&database, housekeeping::RULES).await
        }),
    }
}
