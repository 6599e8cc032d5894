//! The payment gauges, refreshed by every replica each sync interval from the database
//! (database-wide figures, so every replica reports the same; alert on their maximum):
//!
//! - `payment_captures_unapplied_open` and `payment_captures_unapplied_oldest_seconds`:
//!   captures that took money without points and still wait for their refund
//!   (`point-service unapplied-captures --resolve` closes one).
//! - `payment_sync_orders_due` and `payment_sync_oldest_due_seconds`: open orders whose
//!   payments are due to be read back, and how long the most overdue has waited (a backlog
//!   that does not drain); `payment_sync_orders_listed`: orders past the horizon, listed for
//!   a person and not yet resolved (`point-service unsynced-orders`).
//! - `payment_settlement_last_check_timestamp_seconds` (0 before the first) and
//!   `payment_settlement_differences`: when the most recent day that a `point-service
//!   reconcile` run concluded was checked, and its differences (by day, so a re-run of an
//!   older day neither hides nor stands for the latest one); `payment_settlement_unreadable`:
//!   the days of the last 30 whose settlement could not be read and that no run has
//!   concluded since.

use diesel::QueryResult;
use diesel::QueryableByName;
use diesel::sql_types::{BigInt, Double};
use diesel_async::{AsyncPgConnection, RunQueryDsl};

use crate::error::PointError;

/// The figures behind the gauges.
#[derive(Debug, QueryableByName)]
pub struct Figures {
    #[diesel(sql_type = BigInt)]
    pub unapplied_open: i64,
    #[diesel(sql_type = Double)]
    pub unapplied_oldest_seconds: f64,
    #[diesel(sql_type = BigInt)]
    pub sync_due: i64,
    #[diesel(sql_type = Double)]
    pub sync_oldest_due_seconds: f64,
    #[diesel(sql_type = BigInt)]
    pub sync_listed: i64,
    #[diesel(sql_type = Double)]
    pub settlement_checked_at: f64,
    #[diesel(sql_type = BigInt)]
    pub settlement_differences: i64,
    #[diesel(sql_type = BigInt)]
    pub settlement_unreadable: i64,
}

/// Reads the figures and sets the gauges.
pub async fn refresh(pool: &db::Pool) -> Result<(), PointError> {
    let f = {
        let mut conn = pool.get().await?;
        figures(&mut conn).await?
    };
    metrics::gauge!("payment_captures_unapplied_open").set(f.unapplied_open as f64);
    metrics::gauge!("payment_captures_unapplied_oldest_seconds").set(f.unapplied_oldest_seconds);
    metrics::gauge!("payment_sync_orders_due").set(f.sync_due as f64);
    metrics::gauge!("payment_sync_oldest_due_seconds").set(f.sync_oldest_due_seconds);
    metrics::gauge!("payment_sync_orders_listed").set(f.sync_listed as f64);
    metrics::gauge!("payment_settlement_last_check_timestamp_seconds").set(f.settlement_checked_at);
    metrics::gauge!("payment_settlement_differences").set(f.settlement_differences as f64);
    metrics::gauge!("payment_settlement_unreadable").set(f.settlement_unreadable as f64);
    Ok(())
}

/// The figures, in one statement.
pub async fn figures(conn: &mut AsyncPgConnection) -> QueryResult<Figures> {
    diesel::sql_query(FIGURES).get_result(conn).await
}

const FIGURES: &str = "SELECT \
           (SELECT count(*) FROM unapplied_captures WHERE resolved_at IS NULL) AS unapplied_open, \
           (SELECT COALESCE(EXTRACT(EPOCH FROM now() - min(recorded_at)), 0)::float8 \
              FROM unapplied_captures WHERE resolved_at IS NULL) AS unapplied_oldest_seconds, \
           (SELECT count(*) FROM payment_syncs WHERE listed_at IS NULL AND due_at <= now()) AS sync_due, \
           (SELECT COALESCE(EXTRACT(EPOCH FROM now() - min(due_at)), 0)::float8 \
              FROM payment_syncs WHERE listed_at IS NULL AND due_at <= now()) AS sync_oldest_due_seconds, \
           (SELECT count(*) FROM payment_syncs WHERE listed_at IS NOT NULL AND resolved_at IS NULL) AS sync_listed, \
           COALESCE((SELECT EXTRACT(EPOCH FROM checked_at)::float8 FROM settlement_checks \
              WHERE outcome <> 'unreadable' ORDER BY day DESC LIMIT 1), 0) AS settlement_checked_at, \
           COALESCE((SELECT differences::bigint FROM settlement_checks \
              WHERE outcome <> 'unreadable' ORDER BY day DESC LIMIT 1), 0) AS settlement_differences, \
           (SELECT count(*) FROM settlement_checks WHERE outcome = 'unreadable' \
              AND day > current_date - 30) AS settlement_unreadable";
