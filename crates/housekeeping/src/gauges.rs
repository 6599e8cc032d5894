//! The housekeeping gauges, exported by every serving process from `housekeeping_runs`
//! (database-wide, so every replica reports the same; alert on their maximum):
//!
//! - `housekeeping_rows_removed{table}`: rows the table's last run removed;
//! - `housekeeping_last_run_timestamp_seconds{table}`: when it finished, 0 before the first
//!   run (so a housekeeping that never ran alerts like one that stopped).
//!
//! Read at start and then every [`REFRESH_EVERY`]: a run is once a day.

use std::time::Duration;

use diesel::QueryableByName;
use diesel::sql_types::{BigInt, Double, Text};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use tokio::sync::watch;

use crate::Rule;

pub const ROWS_REMOVED: &str = "housekeeping_rows_removed";
pub const LAST_RUN: &str = "housekeeping_last_run_timestamp_seconds";

/// How often a serving process reads the runs again.
pub const REFRESH_EVERY: Duration = Duration::from_secs(60);

#[derive(Debug, QueryableByName)]
struct LastRun {
    #[diesel(sql_type = Text)]
    table_name: String,
    #[diesel(sql_type = BigInt)]
    rows_removed: i64,
    #[diesel(sql_type = Double)]
    finished_at: f64,
}

/// The families' HELP text. Installs the recorder first: a description given before it
/// exists is lost.
pub fn describe() {
    telemetry::metrics::handle();
    metrics::describe_gauge!(
        ROWS_REMOVED,
        metrics::Unit::Count,
        "Rows the last `housekeeping` run removed from the table, by table (read from housekeeping_runs)."
    );
    metrics::describe_gauge!(
        LAST_RUN,
        metrics::Unit::Seconds,
        "Unix time the last `housekeeping` run of the table finished, by table; 0 before the first run."
    );
}

/// Sets the gauges of `rules`' tables from their recorded runs.
pub async fn refresh(conn: &mut AsyncPgConnection, rules: &[Rule]) -> diesel::QueryResult<()> {
    let runs: Vec<LastRun> = diesel::sql_query(
        "SELECT table_name, rows_removed, EXTRACT(EPOCH FROM finished_at)::float8 AS finished_at \
         FROM housekeeping_runs",
    )
    .load(conn)
    .await?;
    for rule in rules {
        let run = runs.iter().find(|run| run.table_name == rule.table);
        metrics::gauge!(ROWS_REMOVED, "table" => rule.table)
            .set(run.map_or(0.0, |run| run.rows_removed as f64));
        metrics::gauge!(LAST_RUN, "table" => rule.table)
            .set(run.map_or(0.0, |run| run.finished_at));
    }
    Ok(())
}

/// Refreshes the gauges at once and then every [`REFRESH_EVERY`] until `stop` turns true
/// (`server::shutdown_watch`). A failed read keeps the last values and is logged; the next
/// one tries again.
pub async fn run(pool: db::Pool, rules: &'static [Rule], mut stop: watch::Receiver<bool>) {
    describe();
    let mut every = tokio::time::interval(REFRESH_EVERY);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = every.tick() => {}
            _ = stop.wait_for(|stopped| *stopped) => return,
        }
        let outcome = match pool.get().await {
            Ok(mut conn) => refresh(&mut conn, rules).await.map_err(|e| e.to_string()),
            Err(e) => Err(e.to_string()),
        };
        if let Err(e) = outcome {
            tracing::warn!(error.message = %e, "cannot read the housekeeping runs; the gauges keep their last values");
        }
    }
}

/// [`run`] as a task of the current Tokio runtime, for a service's `serve`.
pub fn spawn(pool: db::Pool, rules: &'static [Rule], stop: watch::Receiver<bool>) {
    tokio::spawn(run(pool, rules, stop));
}
