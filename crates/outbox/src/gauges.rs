//! The outbox's gauges, refreshed by every replica every [`INTERVAL`] whether or not it
//! publishes (database-wide figures: every replica reports the same; alert on the maximum):
//!
//! - `events_outbox_unpublished`: events written and not yet acknowledged by JetStream;
//! - `events_outbox_oldest_seconds`: how long the oldest of them has waited, 0 when none.
//!
//! A publisher that cannot reach NATS, a missing `NATS_URL`, or no replica holding the lease
//! all show as an age that grows.

use std::time::Duration;

use diesel::QueryableByName;
use diesel::sql_types::{BigInt, Double};
use diesel_async::RunQueryDsl;
use tokio::sync::watch;

pub const UNPUBLISHED: &str = "events_outbox_unpublished";
pub const OLDEST: &str = "events_outbox_oldest_seconds";

/// Describes the two gauges for the service's `/metrics`.
pub fn describe() {
    metrics::describe_gauge!(
        UNPUBLISHED,
        metrics::Unit::Count,
        "Events written to this service's outbox and not yet acknowledged by NATS JetStream \
         (outbox::gauges; the same on every replica)."
    );
    metrics::describe_gauge!(
        OLDEST,
        metrics::Unit::Seconds,
        "How long the oldest event of this service's outbox not yet acknowledged by NATS \
         JetStream has waited, 0 when none (outbox::gauges; the same on every replica)."
    );
}

/// How often the gauges are read from the database.
pub const INTERVAL: Duration = Duration::from_secs(15);

/// The outbox could not be read.
#[derive(Debug, thiserror::Error)]
pub enum GaugeError {
    #[error("the outbox could not be read: {0}")]
    Query(#[from] diesel::result::Error),
    #[error("no database connection: {0}")]
    Pool(#[from] db::PoolError),
}

#[derive(Debug, QueryableByName)]
pub struct Figures {
    #[diesel(sql_type = BigInt)]
    pub unpublished: i64,
    #[diesel(sql_type = Double)]
    pub oldest_seconds: f64,
}

/// Reads the figures (the unpublished rows' partial index; the oldest is the one with the
/// smallest id) and sets the gauges.
pub async fn refresh(pool: &db::Pool) -> Result<Figures, GaugeError> {
    let figures: Figures = {
        let mut conn = pool.get().await?;
        diesel::sql_query(
            "SELECT count(*) AS unpublished, \
                    COALESCE(EXTRACT(EPOCH FROM now() - (SELECT written_at FROM event_outbox \
                        WHERE published_at IS NULL ORDER BY id LIMIT 1)), 0)::float8 AS oldest_seconds \
             FROM event_outbox WHERE published_at IS NULL",
        )
        .get_result(&mut conn)
        .await?
    };
    metrics::gauge!(UNPUBLISHED).set(figures.unpublished as f64);
    metrics::gauge!(OLDEST).set(figures.oldest_seconds);
    Ok(figures)
}

/// Refreshes the gauges every [`INTERVAL`] until `stop` turns true; the first at once, so the
/// alerts see a replica from its start.
pub fn spawn(pool: db::Pool, mut stop: watch::Receiver<bool>) {
    tokio::spawn(async move {
        loop {
            if let Err(e) = refresh(&pool).await {
                tracing::warn!(error.message = %e, "events gauges not refreshed");
            }
            if server::pause_or_stop(&mut stop, INTERVAL).await {
                break;
            }
        }
    });
}
