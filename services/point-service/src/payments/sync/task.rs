//! The sync's worker: every replica runs one inside `serve`. Each interval, the replica that
//! holds the `payment-sync` lease (`worker_leases`) syncs the due orders, one at a time, with
//! its reads of the payment service paced to `PAYMENT_SYNC_READS_PER_SECOND`; holding the
//! lease makes that bound the whole deployment's. Every replica then refreshes the payment
//! gauges (`gauges`), which are database-wide figures.
//!
//! The lease is only about the pace: two workers syncing at once (a leader that stalled
//! past its lease and woke up) apply nothing twice, since every apply is idempotent. On
//! shutdown the worker takes no further order and gives the lease back.

use std::time::{Duration, Instant};

use tokio::sync::watch;

use super::queue::{take_due, undecided};
use super::{gauges, sync_one};
use crate::config::SyncSettings;
use crate::error::PointError;
use crate::payments::client::PaymentClient;
use db::leases;

/// The lease's name in `worker_leases`.
const LEASE: &str = "payment-sync";

/// What the worker needs.
#[derive(Clone)]
pub struct Worker {
    pub pool: db::Pool,
    pub payments: PaymentClient,
    pub settings: SyncSettings,
    /// How long a pay call's attempt counts as in flight (`payments::attempts::in_flight_window`).
    pub window: Duration,
    /// This worker's name in the lease.
    pub holder: String,
}

impl Worker {
    /// The leader's lease: a pass's length plus one order's slowest reads, so that a live
    /// leader renews it (before each order) long before it runs out.
    fn lease(&self) -> Duration {
        self.settings.interval + 2 * self.window
    }

    /// How far taking an order pushes its due time: past one order's usual sync (a read or
    /// two, each bounded by the payment service's timeout, inside `window`), so that a worker
    /// that died under it hands it on soon. A slower sync that outlives it may meet another
    /// worker on the same order, which applies nothing twice.
    fn order_lease(&self) -> Duration {
        2 * self.window
    }

    /// The pace of the reads: one every 1/`PAYMENT_SYNC_READS_PER_SECOND` seconds.
    pub fn pace(&self) -> tokio::time::Interval {
        let period = Duration::from_secs(1)
            / u32::try_from(self.settings.reads_per_second.max(1)).unwrap_or(u32::MAX);
        let mut pace = tokio::time::interval(period);
        pace.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        pace
    }
}

/// Runs a pass every interval until `stop` turns true.
pub async fn run(worker: Worker, mut stop: watch::Receiver<bool>) {
    tracing::info!(
        interval_seconds = worker.settings.interval.as_secs(),
        after_seconds = worker.settings.after.as_secs(),
        reads_per_second = worker.settings.reads_per_second,
        "payment sync started"
    );
    let mut pace = worker.pace();
    // The gauges exist from the start, so the alerts on them see a replica at once.
    if let Err(e) = gauges::refresh(&worker.pool).await {
        tracing::warn!(error.message = %e, "payment gauges not refreshed");
    }
    loop {
        if server::pause_or_stop(&mut stop, worker.settings.interval).await {
            break;
        }
        if let Err(e) = pass(&worker, &mut pace, &stop).await {
            tracing::warn!(error.message = %e, "payment sync pass failed; the next one tries again");
        }
        if let Err(e) = gauges::refresh(&worker.pool).await {
            tracing::warn!(error.message = %e, "payment gauges not refreshed");
        }
    }
    if let Ok(mut conn) = worker.pool.get().await {
        let _ = leases::release(&mut conn, LEASE, &worker.holder).await;
    }
    tracing::info!("payment sync stopped");
}

/// One pass: while this worker holds the lease, syncs due orders until none is left, the
/// interval has passed or `stop` turns true. Returns how many orders it synced.
pub async fn pass(
    worker: &Worker,
    pace: &mut tokio::time::Interval,
    stop: &watch::Receiver<bool>,
) -> Result<usize, PointError> {
    let started = Instant::now();
    let mut synced = 0;
    while started.elapsed() < worker.settings.interval && !*stop.borrow() {
        let taken = {
            let mut conn = worker.pool.get().await?;
            if !leases::lead(&mut conn, LEASE, &worker.holder, worker.lease()).await? {
                break;
            }
            take_due(&mut conn, worker.order_lease(), worker.settings.horizon).await?
        };
        let Some(taken) = taken else { break };
        if let Err(e) = sync_one(
            &worker.pool,
            &worker.payments,
            &worker.settings,
            worker.window,
            &taken,
            pace,
        )
        .await
        {
            metrics::counter!(super::ERRORS).increment(1);
            tracing::warn!(
                order.id = %taken.correlation_id, error.message = %e,
                "payment sync of an order failed; it is tried again later"
            );
            // Backoff and horizon as for an undecided payment; if even that cannot be
            // written, its due time was pushed when it was taken and it comes back.
            let why = format!("the sync failed: {e}");
            if let Ok(mut conn) = worker.pool.get().await {
                let _ = undecided(&mut conn, &worker.settings, &taken, &why).await;
            }
        }
        synced += 1;
    }
    Ok(synced)
}
