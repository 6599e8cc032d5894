//! The retry task: every replica runs one inside `serve`. Each pass credits the pending
//! redemptions that are due (their credit failed, or their holder died and its lease ran
//! out), one at a time, each under a lease that only one replica can hold; then it sets
//! the gauges an alert watches. Between passes it waits `GIFT_CARD_RETRY_INTERVAL_MS`.
//!
//! Each credit goes where its redemption was made to be credited, under its own reference,
//! whatever this replica's `USE_POINT_SERVICE` says (`credit`).
//!
//! On shutdown it takes no further credit and ends after the one it is sending. If the
//! process ends first, that redemption's lease runs out and another replica sends the same
//! reference to the same target again, which applies it once.

use diesel::QueryableByName;
use diesel::sql_types::{BigInt, Double};
use diesel_async::RunQueryDsl;
use tokio::sync::watch;

use crate::config::GiftCardRetry;
use crate::error::OrderError;
use crate::gift_cards::credit::{self, By};
use crate::state::Credit;

/// At most this many credits per pass, so a long backlog still lets the gauges move.
const PER_PASS: usize = 100;

/// What one pass did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Pass {
    /// Credits sent.
    pub tried: usize,
    /// Of those, the ones that landed.
    pub credited: usize,
}

/// Runs a pass every `settings.interval` until `stop` turns true.
pub async fn run(
    pool: db::Pool,
    credit: Credit,
    settings: GiftCardRetry,
    mut stop: watch::Receiver<bool>,
) {
    tracing::info!(
        interval_ms = settings.interval.as_millis() as u64,
        "gift-card retry task started"
    );
    // The first pass waits an interval too: a replica that starts finds the others at work.
    loop {
        if server::pause_or_stop(&mut stop, settings.interval).await {
            break;
        }
        if let Err(e) = pass(&pool, &credit, &settings, &stop).await {
            tracing::warn!(error.message = %e, "gift-card retry pass failed; the next one tries again");
        }
    }
    tracing::info!("gift-card retry task stopped");
}

/// One pass: credits due redemptions until none is left (or [`PER_PASS`], or `stop`),
/// then refreshes the gauges. No connection is held while a credit call is out.
pub async fn pass(
    pool: &db::Pool,
    credit: &Credit,
    settings: &GiftCardRetry,
    stop: &watch::Receiver<bool>,
) -> Result<Pass, OrderError> {
    let mut done = Pass::default();
    while done.tried < PER_PASS && !*stop.borrow() {
        let lease = {
            let mut conn = pool.get().await?;
            credit::take_due(&mut conn, credit.target, settings.lease).await?
        };
        let Some(lease) = lease else { break };
        let outcome = credit::send(credit, &lease).await;
        credit::report(By::Retry, &lease, &outcome, settings);
        done.tried += 1;
        let mut conn = pool.get().await?;
        match outcome {
            Ok(()) => {
                credit::credited(&mut conn, lease.id, false).await?;
                done.credited += 1;
            }
            Err(error) => {
                let backoff = error.backoff(settings, lease.attempt);
                credit::release(&mut conn, &lease, backoff, &error).await?;
            }
        }
    }
    refresh_gauges(pool).await?;
    Ok(done)
}

#[derive(QueryableByName)]
struct Pending {
    #[diesel(sql_type = BigInt)]
    count: i64,
    #[diesel(sql_type = Double)]
    oldest_seconds: f64,
}

/// `gift_card_credits_pending` (redemptions not credited yet) and
/// `gift_card_credit_oldest_pending_seconds` (how long the oldest has waited): database-wide
/// figures, so every replica reports the same; alert on their maximum.
async fn refresh_gauges(pool: &db::Pool) -> Result<(), OrderError> {
    let mut conn = pool.get().await?;
    let pending: Pending = diesel::sql_query(
        "SELECT count(*) AS count, \
                COALESCE(EXTRACT(EPOCH FROM now() - min(created_at)), 0)::float8 AS oldest_seconds \
         FROM gift_card_redemptions WHERE status = $1",
    )
    .bind::<diesel::sql_types::Text, _>(catalog_db::RedemptionStatus::Pending)
    .get_result(&mut conn)
    .await?;
    metrics::gauge!("gift_card_credits_pending").set(pending.count as f64);
    metrics::gauge!("gift_card_credit_oldest_pending_seconds").set(pending.oldest_seconds);
    Ok(())
}
