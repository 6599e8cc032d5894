//! `auth-service`: serve (the default), migrate, wait-for-migrations or seed
//! (`server::Binary`); `--help` says what the service is (its Cargo.toml description).

use std::process::ExitCode;

use auth_service::{DEFAULT_PORT, SERVICE, config::Config, db, seed, startup};
use server::{Binary, Command};

const BINARY: Binary = Binary::new(SERVICE, DEFAULT_PORT, db::MIGRATIONS);

fn main() -> ExitCode {
    let command = server::cli::parse::<Command>(clap::command!()).unwrap_or_default();
    BINARY.run(command, Config::from_env, startup::build, seed::load)
}
