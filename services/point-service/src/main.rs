use std::process::ExitCode;

use clap::Parser;
use point_service::{DEFAULT_PORT, SERVICE, config::Config, db, seed, startup};
use server::{Binary, Command};

/// The points ledger, offers, occasions, point orders, card payments and webhook.
#[derive(Parser)]
#[command(name = "point-service", version)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

const BINARY: Binary = Binary {
    name: SERVICE,
    default_port: DEFAULT_PORT,
    schema: db::SCHEMA,
};

fn main() -> ExitCode {
    BINARY.run(
        Cli::parse().command.unwrap_or_default(),
        Config::from_env,
        startup::build,
        seed::load,
    )
}
