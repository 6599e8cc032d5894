//! Housekeeping: the rows a service writes per request (rate-limit events, wrong guesses,
//! login codes, idempotency keys) are deleted once no rule reads them any more, so those
//! tables stop growing with traffic. Each service lists its tables and how long a row is
//! needed in one [`Rule`] list (`<service>/src/housekeeping.rs`), and runs them with
//! `<service> housekeeping` (a daily CronJob). Money and points records are never listed.
//!
//! A run deletes in batches of [`BATCH_SIZE`] rows, each batch one statement in its own
//! transaction, so it never holds many locks or one long transaction. A batch locks the rows
//! it takes with `FOR UPDATE SKIP LOCKED`: two runs at once (a CronJob and a person) take
//! disjoint rows, neither waits on the other, and each row is counted by the run that
//! deleted it. Each table's run is recorded in `housekeeping_runs` (one row per table, the
//! last run's), which the serving processes export as gauges ([`gauges`]): a CronJob's
//! process is not scraped.

pub mod gauges;

use std::time::Duration;

use chrono::{DateTime, Utc};
use diesel::QueryableByName;
use diesel::sql_types::{BigInt, Text, Timestamptz};
use diesel_async::{AsyncPgConnection, RunQueryDsl};

/// Rows deleted per statement: small enough that a batch is a short transaction holding few
/// row locks, large enough that a day's rows go in a few hundred statements.
pub const BATCH_SIZE: i64 = 1000;

/// One housekept table: its rows whose `age` column is older than `keep` are deleted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rule {
    pub table: &'static str,
    /// The timestamp column that says how old a row is.
    pub age: &'static str,
    /// How long a row is kept: the longest window a rule reads it in, with a margin.
    pub keep: Duration,
}

/// What one table's run removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Removed {
    pub table: &'static str,
    pub rows: i64,
}

/// Why a run stopped. What was deleted before stays deleted; running again finishes the rest.
#[derive(Debug, thiserror::Error)]
pub enum HousekeepingError {
    #[error("cannot connect to the database: {0}")]
    Connect(#[from] diesel::ConnectionError),
    #[error("deleting from {table} failed after {removed} rows: {source}")]
    Delete {
        table: &'static str,
        removed: i64,
        source: diesel::result::Error,
    },
    #[error("recording the run of {table} failed ({removed} rows were removed): {source}")]
    Record {
        table: &'static str,
        removed: i64,
        source: diesel::result::Error,
    },
    #[error("a retention of {0:?} does not fit the database's clock")]
    Keep(Duration),
}

#[derive(QueryableByName)]
struct Now {
    #[diesel(sql_type = Timestamptz)]
    now: DateTime<Utc>,
}

/// The subcommand: connects with the tool's settings, runs [`run`], prints one
/// `<table><TAB><rows removed>` line per table. An error is the process's exit 1.
pub async fn command(database: &db::PoolSettings, rules: &[Rule]) -> Result<(), String> {
    let mut conn = db::connect(database)
        .await
        .map_err(|e| HousekeepingError::Connect(e).to_string())?;
    let removed = run(&mut conn, rules, BATCH_SIZE)
        .await
        .map_err(|e| e.to_string())?;
    for Removed { table, rows } in removed {
        println!("{table}\t{rows}");
    }
    Ok(())
}

/// Deletes each rule's old rows in batches of `batch` and records each table's run.
pub async fn run(
    conn: &mut AsyncPgConnection,
    rules: &[Rule],
    batch: i64,
) -> Result<Vec<Removed>, HousekeepingError> {
    let mut removed = Vec::with_capacity(rules.len());
    for rule in rules {
        let rows = clear(conn, rule, batch).await?;
        record(conn, rule.table, rows).await?;
        tracing::info!(
            db.table = rule.table,
            rows_removed = rows,
            keep_seconds = rule.keep.as_secs(),
            "housekeeping removed rows"
        );
        removed.push(Removed {
            table: rule.table,
            rows,
        });
    }
    Ok(removed)
}

/// One table: the cutoff is fixed once, by the database's clock, so the run ends even while
/// new rows keep ageing past it.
async fn clear(
    conn: &mut AsyncPgConnection,
    rule: &Rule,
    batch: i64,
) -> Result<i64, HousekeepingError> {
    let failed = |removed, source| HousekeepingError::Delete {
        table: rule.table,
        removed,
        source,
    };
    let keep =
        chrono::Duration::from_std(rule.keep).map_err(|_| HousekeepingError::Keep(rule.keep))?;
    let now = diesel::sql_query("SELECT now() AS now")
        .get_result::<Now>(conn)
        .await
        .map_err(|e| failed(0, e))?
        .now;
    let cutoff = now - keep;
    let (table, age) = (db::quote_ident(rule.table), db::quote_ident(rule.age));
    // ctid = ANY(ARRAY(...)) is a TID scan: the outer delete touches exactly the rows the
    // inner select locked. The age is checked again in case a row was updated since.
    let statement = format!(
        "DELETE FROM {table} WHERE ctid = ANY(ARRAY(\
             SELECT ctid FROM {table} WHERE {age} < $1 LIMIT $2 FOR UPDATE SKIP LOCKED)) \
         AND {age} < $1"
    );
    let mut total = 0;
    loop {
        let deleted = diesel::sql_query(&statement)
            .bind::<Timestamptz, _>(cutoff)
            .bind::<BigInt, _>(batch)
            .execute(conn)
            .await
            .map_err(|e| failed(total, e))?;
        total += deleted as i64;
        // Only an empty batch means nothing old is left unlocked (rows another run holds
        // are its to delete and count): a batch comes back short also when a row it locked
        // was updated meanwhile and its new version is no longer the statement's to delete.
        if deleted == 0 {
            return Ok(total);
        }
    }
}

/// The table's last run, for the gauges.
async fn record(
    conn: &mut AsyncPgConnection,
    table: &'static str,
    rows: i64,
) -> Result<(), HousekeepingError> {
    diesel::sql_query(
        "INSERT INTO housekeeping_runs (table_name, rows_removed, finished_at) \
         VALUES ($1, $2, clock_timestamp()) \
         ON CONFLICT (table_name) DO UPDATE \
         SET rows_removed = EXCLUDED.rows_removed, finished_at = EXCLUDED.finished_at",
    )
    .bind::<Text, _>(table)
    .bind::<BigInt, _>(rows)
    .execute(conn)
    .await
    .map(|_| ())
    .map_err(|source| HousekeepingError::Record {
        table,
        removed: rows,
        source,
    })
}

/// The subcommand's `--help` epilogue (`server::Binary::with_database`'s codes).
pub const EXIT_CODES: &str = "Exit codes: 0 done (also when nothing was old enough); 1 failed: \
the database could not be reached or failed part way (what was deleted stays deleted; run it \
again); 2 bad configuration (DATABASE_URL unset or invalid).";
