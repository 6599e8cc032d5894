use std::process::ExitCode;

use clap::Parser;
use order_service::{DEFAULT_PORT, SERVICE, config::Config, seed, startup};
use server::{Binary, Command};

/// The app's /api/v2/client: relays the point routes, serves earn rates, gift cards, services, stores.
#[derive(Parser)]
#[command(name = "order-service", version)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

const BINARY: Binary = Binary {
    name: SERVICE,
    default_port: DEFAULT_PORT,
    migrations: catalog_db::MIGRATIONS,
};

fn main() -> ExitCode {
    BINARY.run(
        Cli::parse().command.unwrap_or_default(),
        Config::from_env,
        startup::build,
        seed::load,
    )
}
