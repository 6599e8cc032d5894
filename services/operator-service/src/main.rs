//! `operator-service`: the common subcommands (`server::Binary`) and `token`, which prints
//! an operator token; `--help` says what the service is (its Cargo.toml description).

use std::process::ExitCode;

use clap::Subcommand;
use operator_service::auth::{OperatorKeys, Role};
use operator_service::{DEFAULT_PORT, SERVICE, config::Config, seed, startup};
use server::{Binary, Command};

#[derive(Subcommand)]
enum OperatorCommand {
    #[command(flatten)]
    Common(Command),
    /// Print an operator token (development and tests), signed with OPERATOR_JWT_SECRET.
    Token {
        /// super_admin, admin, merchant_manager, store_manager or data_entry.
        #[arg(long)]
        role: String,
        /// The operator id.
        #[arg(long)]
        sub: String,
        /// Hours the token is valid.
        #[arg(long, default_value_t = 12)]
        hours: i64,
    },
}

const BINARY: Binary = Binary::new(SERVICE, DEFAULT_PORT, catalog_db::MIGRATIONS);

fn main() -> ExitCode {
    match server::cli::parse(clap::command!()).unwrap_or(OperatorCommand::Common(Command::Serve)) {
        OperatorCommand::Common(command) => {
            BINARY.run(command, Config::from_env, startup::build, seed::load)
        }
        OperatorCommand::Token { role, sub, hours } => token(&role, &sub, hours),
    }
}

fn token(role: &str, sub: &str, hours: i64) -> ExitCode {
    let role: Role = match role.parse() {
        Ok(role) => role,
        Err(e) => {
            eprintln!(
                "{SERVICE}: {e}; expected one of super_admin, admin, merchant_manager, store_manager, data_entry"
            );
            return ExitCode::from(2);
        }
    };
    let Some(secret) = std::env::var("OPERATOR_JWT_SECRET")
        .ok()
        .filter(|s| !s.is_empty())
    else {
        eprintln!("{SERVICE}: configuration error: OPERATOR_JWT_SECRET is required but not set");
        return ExitCode::from(2);
    };
    match OperatorKeys::new(secret.as_bytes()).issue(sub, role, hours) {
        Ok(token) => {
            println!("{token}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{SERVICE}: cannot sign the token: {e}");
            ExitCode::from(1)
        }
    }
}
