use std::process::ExitCode;

use auth_service::{DEFAULT_PORT, SERVICE, config::Config, db, seed, startup};
use clap::Parser;
use server::{Binary, Command};

/// Client accounts: OTP login, tokens, profile, push setting, devices, address book.
#[derive(Parser)]
#[command(name = "auth-service", version)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

const BINARY: Binary = Binary {
    name: SERVICE,
    default_port: DEFAULT_PORT,
    migrations: db::MIGRATIONS,
};

fn main() -> ExitCode {
    BINARY.run(
        Cli::parse().command.unwrap_or_default(),
        Config::from_env,
        startup::build,
        seed::load,
    )
}
