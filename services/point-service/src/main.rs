use std::process::ExitCode;

use clap::{Parser, Subcommand};
use point_service::{DEFAULT_PORT, SERVICE, audit, config::Config, db, seed, startup};
use server::{Binary, Command};

/// The points ledger, offers, occasions, point orders, card payments and webhook.
#[derive(Parser)]
#[command(name = "point-service", version)]
struct Cli {
    #[command(subcommand)]
    command: Option<PointCommand>,
}

#[derive(Subcommand)]
enum PointCommand {
    #[command(flatten)]
    Common(Command),
    /// Check the ledger's invariants (balances, order entries, idempotency keys, credits);
    /// exit 1 with the first violation.
    Audit,
}

const BINARY: Binary = Binary {
    name: SERVICE,
    default_port: DEFAULT_PORT,
    schema: db::SCHEMA,
};

fn main() -> ExitCode {
    match Cli::parse()
        .command
        .unwrap_or(PointCommand::Common(Command::Serve))
    {
        PointCommand::Common(command) => {
            BINARY.run(command, Config::from_env, startup::build, seed::load)
        }
        PointCommand::Audit => BINARY.with_database(async |url| audit::command(&url).await),
    }
}
