//! `point-service expire-points`: executes the expiry rule (`expiry::rule`). Every client whose
//! expiry date (the one the balance answers) has passed loses its whole positive balance in
//! one `expiry` entry, referenced `expiry:<client_id>:<expiry date>:<run date>`, the run date
//! being the Riyadh date of the entry itself (the database's clock).
//!
//! A date passes by the database's clock only: a real run refuses a `--today` after the
//! database's Riyadh date (a typo would take points months before the date the balance
//! promises); a dry run may look ahead.
//!
//! Why it is safe to run at any time, as often as one likes, from several replicas at once:
//! - Clients are found in keyset pages by client id, and each client is expired in a short
//!   transaction of its own, so no transaction spans millions of clients and a crash loses
//!   at most the one client in flight (rolled back whole). Running again resumes: the
//!   clients already expired have nothing left to expire.
//! - Each client's transaction first locks its account row, the lock a spend takes, then
//!   re-reads the balance and re-computes the expiry date under it. A spend that committed
//!   first has lowered the balance the expiry takes; a spend that comes later finds zero. An
//!   earn that committed first (appending an entry waits for the lock too: its foreign key
//!   takes a share lock on the account row) moves the date, and nothing expires.
//! - The reference is unique in the ledger, and checked under the lock: a second run the
//!   same day, or a second replica waiting on the same lock, finds the entry and writes
//!   nothing. Points that arrive after an expiry by a kind that does not move the date (a
//!   gift, a purchase, a credit) leave the date passed: the next day's run takes them, as an
//!   entry of its own, so the date the app shows stays true.
//! - A zero or negative balance expires nothing: an expiry never drives a balance below 0.

use std::ops::ControlFlow;
use std::process::ExitCode;

use bigdecimal::{BigDecimal, Zero};
use chrono::NaiveDate;
use diesel::prelude::*;
use diesel_async::{AsyncConnection, AsyncPgConnection};
use domain::Points;

use crate::expiry::rule::{self, ClientExpiry, Policy};
use crate::ledger::{self, Entry, Kind};
use crate::riyadh;

/// How `expire-points` runs.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// The Riyadh date to expire as of; `None` is today by the database's clock.
    pub today: Option<NaiveDate>,
    /// Clients per page of the search.
    pub batch_size: i64,
    /// Decide and report, write nothing.
    pub dry_run: bool,
}

pub const DEFAULT_BATCH_SIZE: i64 = 500;

/// What a candidate came to once its account was locked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The expiry made (or, in a dry run, that would be made).
    Expired(ClientExpiry),
    /// The settings no longer expire anything, or the client has no earn.
    NoDate,
    /// An earn moved the date since the search saw the client.
    NotYet(NaiveDate),
    /// Nothing positive to take (spent meanwhile, or already expired by another run).
    NothingToExpire,
    /// Today's expiry entry for this date exists: the balance arrived after it, by a kind
    /// that does not move the date (a gift, a purchase, a credit), and goes with the next
    /// day's run.
    AlreadyExpired(NaiveDate),
}

/// What a run did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    /// The Riyadh date it expired as of.
    pub today: Option<NaiveDate>,
    /// `false` when the settings say `never` or are unset: nothing was searched.
    pub expiry_on: bool,
    pub clients_expired: u64,
    pub points_expired: BigDecimal,
    /// Candidates that had nothing to expire once locked (see [`Outcome`]).
    pub clients_unchanged: u64,
    pub batches: u64,
    /// `true` when the observer stopped the run before the last page.
    pub stopped: bool,
}

impl Summary {
    fn count(&mut self, outcome: &Outcome) {
        match outcome {
            Outcome::Expired(expired) => {
                self.clients_expired += 1;
                self.points_expired += &expired.points;
            }
            _ => self.clients_unchanged += 1,
        }
    }

    /// The line a run ends with on stdout.
    pub fn line(&self, dry_run: bool) -> String {
        let today = self.today.map_or("-".to_owned(), riyadh::text);
        if !self.expiry_on {
            return format!(
                "expiry is off (point settings say never, or are unset): nothing expired (Asia/Riyadh date {today})"
            );
        }
        format!(
            "{}: {} clients, {} points (Asia/Riyadh date {today}; {} candidates unchanged)",
            if dry_run { "would expire" } else { "expired" },
            self.clients_expired,
            Points::new(self.points_expired.clone()).to_text(),
            self.clients_unchanged,
        )
    }
}

/// Why a run, or one client's expiry, stopped.
#[derive(Debug, thiserror::Error)]
pub enum ExpireError {
    #[error(
        "--today {} is after the database's Asia/Riyadh date {}: a run expires only dates that \
         have passed by the database's clock (--dry-run may look ahead)",
        riyadh::text(*today), riyadh::text(*database)
    )]
    TodayAhead {
        today: NaiveDate,
        database: NaiveDate,
    },
    #[error(transparent)]
    Database(#[from] diesel::result::Error),
}

/// Refuses to expire as of a date the database's clock has not reached.
fn check_today(today: NaiveDate, database: NaiveDate) -> Result<(), ExpireError> {
    if today > database {
        return Err(ExpireError::TodayAhead { today, database });
    }
    Ok(())
}

/// A run that stopped: what it had done, and why.
#[derive(Debug)]
pub struct Failed {
    pub done: Summary,
    pub error: ExpireError,
}

impl std::fmt::Display for Failed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.error {
            ExpireError::TodayAhead { .. } => write!(f, "{}", self.error),
            ExpireError::Database(error) => write!(
                f,
                "{error} (after {} clients expired; run again to finish: what is done stays done once)",
                self.done.clients_expired
            ),
        }
    }
}

impl std::error::Error for Failed {}

/// Expires (or, dry, reports) every client whose date has passed. `observe` sees each
/// candidate's outcome once its transaction has committed, and may stop the run there.
pub async fn run(
    conn: &mut AsyncPgConnection,
    options: Options,
    mut observe: impl FnMut(&Outcome) -> ControlFlow<()>,
) -> Result<Summary, Failed> {
    let mut summary = Summary::default();
    match walk(conn, options, &mut summary, &mut observe).await {
        Ok(()) => Ok(summary),
        Err(error) => Err(Failed {
            done: summary,
            error,
        }),
    }
}

async fn walk(
    conn: &mut AsyncPgConnection,
    options: Options,
    summary: &mut Summary,
    observe: &mut impl FnMut(&Outcome) -> ControlFlow<()>,
) -> Result<(), ExpireError> {
    let database = riyadh::today(conn).await?;
    let today = options.today.unwrap_or(database);
    if !options.dry_run {
        check_today(today, database)?;
    }
    summary.today = Some(today);
    let Some(policy) = Policy::load(conn).await? else {
        return Ok(());
    };
    summary.expiry_on = true;
    // Dates that have passed are the ones before today.
    let Some(window) = today
        .pred_opt()
        .and_then(|yesterday| policy.earned_for(None, yesterday))
    else {
        return Ok(());
    };
    let mut after = 0;
    loop {
        let page = rule::holders(conn, window, after, options.batch_size).await?;
        let Some(last) = page.last() else {
            return Ok(());
        };
        after = last.client_id;
        summary.batches += 1;
        for holder in &page {
            let outcome = if options.dry_run {
                dry(conn, holder.client_id, today).await?
            } else {
                expire(conn, holder.client_id, today).await?
            };
            summary.count(&outcome);
            if observe(&outcome).is_break() {
                summary.stopped = true;
                return Ok(());
            }
        }
        tracing::info!(
            batch = summary.batches,
            last.client.id = after,
            clients.expired = summary.clients_expired,
            "expire-points: batch done"
        );
    }
}

/// One client as of `today`, in a transaction of its own, under its account's lock.
pub async fn expire(
    conn: &mut AsyncPgConnection,
    client_id: i64,
    today: NaiveDate,
) -> Result<Outcome, ExpireError> {
    conn.transaction(async |conn| {
        let mut account = ledger::lock_account(conn, client_id).await?;
        // `now()` is the transaction's start, the instant that stamps the entry: the run
        // date in its reference is the entry's own Riyadh date, even in a run that crosses
        // midnight.
        let run_date = riyadh::today(conn).await?;
        check_today(today, run_date)?;
        let balance = account.balance().clone();
        let outcome = decide(conn, client_id, balance, today, run_date).await?;
        if let Outcome::Expired(expired) = &outcome {
            let reference = rule::reference(client_id, expired.date, run_date);
            ledger::append(
                conn,
                &mut account,
                Entry {
                    kind: Kind::Expiry,
                    points: -expired.points.clone(),
                    order: None,
                    reference: Some(&reference),
                    at: None,
                },
            )
            .await?;
        }
        Ok(outcome)
    })
    .await
}

/// What [`expire`] would do, read-only and without a lock.
async fn dry(
    conn: &mut AsyncPgConnection,
    client_id: i64,
    today: NaiveDate,
) -> QueryResult<Outcome> {
    conn.build_transaction()
        .read_only()
        .run(async |conn| {
            let balance = ledger::balance(conn, client_id).await?.unwrap_or_default();
            let run_date = riyadh::today(conn).await?;
            decide(conn, client_id, balance, today, run_date).await
        })
        .await
}

/// The decision for one client, from its balance and the date as they are now; `run_date`
/// is the Riyadh date an entry written now carries.
async fn decide(
    conn: &mut AsyncPgConnection,
    client_id: i64,
    balance: BigDecimal,
    today: NaiveDate,
    run_date: NaiveDate,
) -> QueryResult<Outcome> {
    let Some(date) = rule::date(conn, client_id).await? else {
        return Ok(Outcome::NoDate);
    };
    if !rule::has_passed(date, today) {
        return Ok(Outcome::NotYet(date));
    }
    if balance <= BigDecimal::zero() {
        return Ok(Outcome::NothingToExpire);
    }
    if ledger::has_reference(conn, &rule::reference(client_id, date, run_date)).await? {
        return Ok(Outcome::AlreadyExpired(date));
    }
    Ok(Outcome::Expired(ClientExpiry {
        client_id,
        date,
        points: balance,
    }))
}

/// `point-service expire-points` on the database of `database`: in a dry run one line per
/// client it would expire; then the summary line, also logged. A refused `--today` is exit
/// code 2, with nothing done.
pub async fn command(database: &db::PoolSettings, options: Options) -> Result<ExitCode, String> {
    let notice_days = match super::notices::days_from_env() {
        Ok(days) => days,
        Err(e) => {
            eprintln!("point-service: {e}");
            return Ok(ExitCode::from(2));
        }
    };
    let mut conn = db::connect(database)
        .await
        .map_err(|e| format!("cannot connect to the database: {e}"))?;
    if options.dry_run {
        println!("client_id\texpiry_date\tpoints");
    }
    let print = |outcome: &Outcome| {
        if let (true, Outcome::Expired(expired)) = (options.dry_run, outcome) {
            println!("{}", expired.line());
        }
        ControlFlow::Continue(())
    };
    let summary = match run(&mut conn, options, print).await {
        Ok(summary) => summary,
        Err(
            refused @ Failed {
                error: ExpireError::TodayAhead { .. },
                ..
            },
        ) => {
            eprintln!("point-service: {refused}");
            return Ok(ExitCode::from(2));
        }
        Err(failed) => return Err(failed.to_string()),
    };
    let line = summary.line(options.dry_run);
    println!("{line}");
    // Then the "expiring soon" events (`notices`), as of the database's own date whatever
    // `--today` said; a dry run writes none.
    if !options.dry_run && summary.expiry_on {
        let written = super::notices::write(&mut conn, &notice_days)
            .await
            .map_err(|e| format!("expiring-soon notices: {e} (the expiries above are done)"))?;
        tracing::info!(notices = ?written.by_notice, "expire-points: expiring-soon notices written");
    }
    tracing::info!(
        dry_run = options.dry_run,
        clients.expired = summary.clients_expired,
        points.expired = %Points::new(summary.points_expired.clone()),
        clients.unchanged = summary.clients_unchanged,
        "expire-points: {line}"
    );
    Ok(ExitCode::SUCCESS)
}
