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
//! - `payment_settlement_last_check_timestamp_seconds` (0 before the first),
//!   `payment_settlement_differences` and `payment_settlement_unreadable`: the latest
//!   `point-service reconcile` run that concluded, its differences, and whether the latest
//!   run of all could not read the settlement.

use diesel::QueryableByName;
use diesel::sql_types::{BigInt, Double};
use diesel_async::RunQueryDsl;

use crate::error::PointError;

#[derive(QueryableByName)]
struct Figures {
    #[diesel(sql_type = BigInt)]
    unapplied_open: i64,
    #[diesel(sql_type = Double)]
    unapplied_oldest_seconds: f64,
    #[diesel(sql_type = BigInt)]
    sync_due: i64,
    #[diesel(sql_type = Double)]
    sync_oldest_due_seconds: f64,
    #[diesel(sql_type = BigInt)]
    sync_listed: i64,
    #[diesel(sql_type = Double)]
    settlement_checked_at: f64,
    #[diesel(sql_type = BigInt)]
    settlement_differences: i64,
    #[diesel(sql_type = BigInt)]
    settlement_unreadable: i64,
}

/// Reads the figures in one statement and sets the gauges.
pub async fn refresh(pool: &db::Pool) -> Result<(), PointError> {
    let mut conn = pool.get().await?;
    let f: Figures = diesel::sql_query(
        "SELECT \
           (SELECT count(*) FROM unapplied_captures WHERE resolved_at IS NULL) AS unapplied_open, \
           (SELECT COALESCE(EXTRACT(EPOCH FROM now() - min(recorded_at)), 0)::float8 \
              FROM unapplied_captures WHERE resolved_at IS NULL) AS unapplied_oldest_seconds, \
           (SELECT count(*) FROM payment_syncs WHERE listed_at IS NULL AND due_at <= now()) AS sync_due, \
           (SELECT COALESCE(EXTRACT(EPOCH FROM now() - min(due_at)), 0)::float8 \
              FROM payment_syncs WHERE listed_at IS NULL AND due_at <= now()) AS sync_oldest_due_seconds, \
           (SELECT count(*) FROM payment_syncs WHERE listed_at IS NOT NULL AND resolved_at IS NULL) AS sync_listed, \
           COALESCE((SELECT EXTRACT(EPOCH FROM checked_at)::float8 FROM settlement_checks \
              WHERE outcome <> 'unreadable' ORDER BY checked_at DESC LIMIT 1), 0) AS settlement_checked_at, \
           COALESCE((SELECT differences::bigint FROM settlement_checks \
              WHERE outcome <> 'unreadable' ORDER BY checked_at DESC LIMIT 1), 0) AS settlement_differences, \
           COALESCE((SELECT (outcome = 'unreadable')::int::bigint FROM settlement_checks \
              ORDER BY checked_at DESC LIMIT 1), 0) AS settlement_unreadable",
    )
    .get_result(&mut conn)
    .await?;
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
