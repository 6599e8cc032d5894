use std::process::ExitCode;

use clap::{Parser, Subcommand};
use point_service::{DEFAULT_PORT, SERVICE, audit, config::Config, db, seed, startup, unapplied};
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
    /// Check the ledger's invariants (balances, order entries, idempotency keys, credits,
    /// unapplied captures listed); exit 1 with the first violation. Also reports how many
    /// unapplied captures are open.
    Audit,
    /// List the open unapplied captures (money taken without points: order already paid or
    /// failed, unknown order, another amount or currency) for refund, tab-separated: event
    /// id, order, payment id, amount, reason, time. Refunds are made at the payment service.
    UnappliedCaptures {
        /// Mark the capture with this event id resolved (refunded or otherwise settled).
        #[arg(long, value_name = "EVENT_ID", requires = "note")]
        resolve: Option<String>,
        /// With --resolve: the refund's reference, or who settled it and how.
        #[arg(long, value_name = "TEXT", requires = "resolve")]
        note: Option<String>,
    },
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
        PointCommand::Audit => {
            BINARY.with_database(async |database| audit::command(&database).await)
        }
        PointCommand::UnappliedCaptures { resolve, note } => {
            BINARY.with_database(async |database| {
                unapplied::command(&database, resolve.as_deref(), note.as_deref()).await
            })
        }
    }
}
