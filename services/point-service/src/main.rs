use std::process::ExitCode;

use chrono::NaiveDate;
use clap::{Parser, Subcommand};
use point_service::reports::{audit, cross_check, liability, reconcile};
use point_service::{
    DEFAULT_PORT, SERVICE, config::Config, db, expiry, housekeeping, payments, seed, startup,
};
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
    /// expiry entries, unapplied captures listed); exit 1 with the first violation. Also
    /// reports how many unapplied captures are open.
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
    /// List the orders the payment sync gave up on (still open PAYMENT_SYNC_HORIZON_DAYS after
    /// their latest pay attempt, a payment still undecided or unreadable at the payment
    /// service), tab-separated: order, payer, amount, latest attempt, listed at, reason. Settle
    /// each at the payment service (docs/runbook.md).
    UnsyncedOrders {
        /// Mark this listed order (its correlation_id) resolved.
        #[arg(long, value_name = "ORDER", requires = "note")]
        resolve: Option<String>,
        /// With --resolve: what was found at the payment service and done.
        #[arg(long, value_name = "TEXT", requires = "resolve")]
        note: Option<String>,
    },
    /// Expire the points of every client whose expiry date (the balance's
    /// pointsExpirationDate: newest earn plus the inactivity days, Asia/Riyadh) has passed,
    /// when the point settings say `inactivity`: one `expiry` entry per client and date takes
    /// the whole positive balance.
    ///
    /// Safe to run at any time and from several replicas at once: each client is expired
    /// at most once a day per date, under its account's lock, in a short transaction of its
    /// own (the entry's reference is expiry:<client>:<expiry date>:<run date>). Points that
    /// arrive after an expiry without moving the date (a gift, a purchase, a credit) go with
    /// the next day's run. After a crash, run it again: it finishes what is left and
    /// expires nothing twice.
    ///
    /// Then, unless dry, sends the "points expiring soon" events: once per client, expiry date
    /// and notice, for each notice of EXPIRY_NOTICE_DAYS (days before the date, comma-separated,
    /// default 7,1), with the points that would expire (logged, not printed).
    ///
    /// Prints a summary line at the end: `expired: <clients> clients, <points> points ...`
    /// (with --dry-run, first `client_id<TAB>expiry_date<TAB>points` per client it would
    /// expire, then `would expire: ...`).
    #[command(after_help = EXIT_CODES)]
    ExpirePoints {
        /// Report what would expire and change nothing.
        #[arg(long)]
        dry_run: bool,
        /// Expire as of this Asia/Riyadh date instead of today by the database's clock
        /// (dates before it have passed). A date after the database's today is refused
        /// (exit 2) unless with --dry-run, which may look ahead.
        #[arg(long, value_name = "YYYY-MM-DD")]
        today: Option<NaiveDate>,
        /// Clients found per search page (each client still gets its own transaction).
        #[arg(long, value_name = "N", default_value_t = expiry::job::DEFAULT_BATCH_SIZE,
              value_parser = clap::value_parser!(i64).range(1..=100_000))]
        batch_size: i64,
    },
    /// List the clients whose points expire in the next N days, for reminders,
    /// tab-separated with a header: client_id, expiry_date (the last day the points can be
    /// spent, from today to today + N), points (the balance that would expire). Empty when
    /// the point settings say `never`.
    #[command(after_help = EXIT_CODES)]
    Expiring {
        /// The window in days after today (0: the clients whose last day is today).
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(0..=36_500))]
        days: u64,
        /// Count from this Asia/Riyadh date instead of today by the database's clock.
        #[arg(long, value_name = "YYYY-MM-DD")]
        today: Option<NaiveDate>,
    },
    /// The points liability for finance, from the ledger's entries: balances when the period
    /// starts, its movements, balances when it ends. Tab-separated `section<TAB>name<TAB>value`:
    ///
    ///   period       from, to         the Asia/Riyadh dates (`-`: the first or last entry)
    ///   opening      balance          sum of all balances when the period starts
    ///   issued       earn, gift_card_credit, card_orders, total: points that entered the
    ///                programme (card_orders: the credits of orders paid by card)
    ///   transfers    credited         points credited to recipients of point orders paid
    ///                                 with points (a move between clients, not issuance)
    ///   transfers    debited          points debited from their payers (positive; the
    ///                                 excess over credited is burnt)
    ///   spent        spend            points spent (a positive amount)
    ///   expired      expiry           points expired (positive)
    ///   adjusted     adjustment       the signed net of adjustments (seeded legacy ones
    ///                                 and support's)
    ///   adjusted     support_adjustment  support's alone, made through the back office
    ///   closing      balance          sum of all balances when the period ends
    ///   outstanding  points, clients  positive balances at the end, and the clients holding them
    ///   negative     points, clients  balances below zero at the end, and those clients
    ///
    /// closing = opening + issued total + transfers credited - transfers debited - spent -
    /// expired + adjusted. Points are decimal text as the balance answers them (at most 4
    /// decimals, no trailing zeros). An entry the report cannot place (an unknown kind, a
    /// credit of no card or point order) fails it.
    #[command(after_help = EXIT_CODES, verbatim_doc_comment)]
    Liability {
        /// First Asia/Riyadh date of the period (included); default: the first entry.
        #[arg(long, value_name = "YYYY-MM-DD")]
        from: Option<NaiveDate>,
        /// Last Asia/Riyadh date of the period (included); default: the last entry.
        #[arg(long, value_name = "YYYY-MM-DD")]
        to: Option<NaiveDate>,
    },
    /// The daily settlement check: a UTC day's captures at the payment service against the
    /// ledger's card credits, one line per difference.
    ///
    /// Reads the day's settlement and the day before's, every page, then the ledger. Prints
    /// one tab-separated line per difference, `kind<TAB>payment_id<TAB>order<TAB>settlement
    /// <TAB>ledger` (order: the payment's reference; settlement and ledger: what each says),
    /// then a summary line `settlement <day>: agrees|N differences (...)`. Kinds:
    ///
    ///   capture_not_credited    in the day's settlement, neither credited nor listed for
    ///                           refund (a capture listed, resolved or not, is no difference)
    ///   credit_without_capture  a card credit applied that day (UTC) whose payment is in
    ///                           neither that day's settlement nor the day before's, or that
    ///                           names no payment
    ///   amount_mismatch         the capture's amount is not its credit's
    ///   currency_mismatch       the capture's currency is not its credit's
    ///   reference_mismatch      the capture was credited to another order than the one it
    ///                           names (the points went to someone who did not pay them)
    ///   credited_twice          a payment of the day's settlement, or credited that day,
    ///                           credited more than once (the ledger column lists every
    ///                           credit, whatever its day)
    ///
    /// A credit is a payment_captured event applied (outcome captured), by the webhook or the
    /// payment sync alike. Each run's outcome (agrees, differs, unreadable) is recorded for
    /// its day in settlement_checks, which the service exports as the payment_settlement_*
    /// gauges. Reads PAYMENT_SERVICE_URL (required) and PAYMENT_SERVICE_TIMEOUT_MS besides
    /// the database's variables.
    #[command(after_help = RECONCILE_EXIT_CODES, verbatim_doc_comment)]
    Reconcile {
        /// The UTC day to check; default: yesterday (UTC). Today is checked as far as it is
        /// settled so far (a warning says so); a later day is refused (exit 2).
        #[arg(long, value_name = "YYYY-MM-DD")]
        date: Option<NaiveDate>,
    },
    /// Delete the rows no rule reads any more: idempotency keys older than 48 hours (a key
    /// answers for 24). Never a ledger, order, payment or credit row. In batches of 1000,
    /// each its own transaction; safe to run from several places at once. Prints
    /// `table<TAB>rows removed` per table and records each table's run for the
    /// housekeeping_* gauges.
    #[command(after_help = ::housekeeping::EXIT_CODES)]
    Housekeeping,
    /// Compare the ledger with the catalog and auth databases, after one of them was
    /// restored to an earlier time: every gift-code credit has its redemption (same client,
    /// same points), every redemption the point service credited has its credit, every
    /// client an order or an account names exists. One line per difference, tab-separated:
    /// kind, what, details. Changes nothing (docs/runbook.md, "Restoring a database", says
    /// how to settle each). Reads CATALOG_DATABASE_URL and AUTH_DATABASE_URL (read-only
    /// access is enough) besides the database's variables.
    #[command(after_help = CROSS_CHECK_EXIT_CODES, verbatim_doc_comment)]
    CrossCheck {
        #[arg(
            long,
            env = "CATALOG_DATABASE_URL",
            hide_env_values = true,
            value_name = "URL"
        )]
        catalog_url: String,
        #[arg(
            long,
            env = "AUTH_DATABASE_URL",
            hide_env_values = true,
            value_name = "URL"
        )]
        auth_url: String,
    },
}

const CROSS_CHECK_EXIT_CODES: &str = "Exit codes: 0 the databases agree; 1 at least one \
difference (the lines on stdout); 2 nothing concluded: a database could not be read, or bad \
arguments or configuration.";

const EXIT_CODES: &str = "Exit codes: 0 done (also when nothing was due, or expiry is off); \
1 failed: the database could not be reached or failed part way (expire-points: what was \
done stays done, run it again), or liability's --from is after --to; 2 bad arguments or \
configuration (DATABASE_URL unset or invalid), or expire-points' --today after the database's \
Asia/Riyadh date.";

const RECONCILE_EXIT_CODES: &str = "Exit codes: 0 the day agrees; 1 there is at least one \
difference (the lines before the summary; recorded as differs); 2 nothing concluded: a page of \
either day's settlement could not be read (an answer other than 2xx, a timeout, the payment \
service unreachable, a body that is not a settlement page: the reason on stderr, recorded as \
unreadable) or the database failed, or bad arguments or configuration (DATABASE_URL or \
PAYMENT_SERVICE_URL unset or invalid, a --date that is not a date or is after today).";

const BINARY: Binary = Binary::new(SERVICE, DEFAULT_PORT, db::MIGRATIONS);

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
                payments::unapplied::command(&database, resolve.as_deref(), note.as_deref()).await
            })
        }
        PointCommand::UnsyncedOrders { resolve, note } => BINARY.with_database(async |database| {
            payments::sync::listed::command(&database, resolve.as_deref(), note.as_deref()).await
        }),
        PointCommand::ExpirePoints {
            dry_run,
            today,
            batch_size,
        } => BINARY.with_database_code(async |database| {
            expiry::job::command(
                &database,
                expiry::job::Options {
                    today,
                    batch_size,
                    dry_run,
                },
            )
            .await
        }),
        PointCommand::Expiring { days, today } => BINARY
            .with_database(async |database| expiry::report::command(&database, days, today).await),
        PointCommand::Liability { from, to } => BINARY.with_database(async |database| {
            liability::command(&database, liability::Period { from, to }).await
        }),
        PointCommand::Reconcile { date } => match reconcile::Settings::from_process() {
            Ok(settings) => BINARY.with_database_code(async |database| {
                Ok(reconcile::command(&database, &settings, date).await)
            }),
            Err(code) => code,
        },
        PointCommand::Housekeeping => BINARY.with_database(async |database| {
            ::housekeeping::command(&database, housekeeping::RULES).await
        }),
        PointCommand::CrossCheck {
            catalog_url,
            auth_url,
        } => BINARY.with_database_code(async |database| {
            Ok(cross_check::command(&database, &catalog_url, &auth_url).await)
        }),
    }
}
