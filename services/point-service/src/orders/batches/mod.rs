//! Point orders paid with points, checked and ready to write, are written many to one
//! transaction (docs/decisions.md, "Batched point orders"). A hot payer's
//! orders then share one lock of the payer's account and one commit instead of queueing for
//! them one by one.
//!
//! Each replica runs `lanes` batchers; a payer's orders always go to the same one (by payer
//! id), so they are applied in the order they reached it. A batcher takes the orders waiting
//! for it, at most `batch_max`, waiting up to `window` for more once it has the first, and
//! writes them together (`write`); those that come meanwhile queue for the next batch.
//! Nothing is answered before its batch commits: a crash before the commit leaves no order
//! acknowledged and none applied. A batch whose statement the database refuses is written
//! again one order per transaction, so a bad order fails alone.

mod gather;
mod write;

use std::sync::Arc;
use std::time::Duration;

use bigdecimal::BigDecimal;
use diesel_async::AsyncConnection;
use relayed_routes::offers::Offer;
use relayed_routes::orders::OrderView;
use tokio::sync::{mpsc, oneshot};
use uuid::Uuid;

use super::idempotency::Claim;
use crate::error::PointError;

/// Batches written, by their number of orders: the dashboard's batch size.
pub const BATCH_SIZE: &str = "point_order_batch_size";

/// Orders waiting for a batch: one that grows says the batches are slower than the orders.
pub const QUEUED: &str = "point_order_batch_queue";

/// The batchers' pace (`POINT_ORDER_BATCH_*`, `config`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchSettings {
    /// `POINT_ORDER_BATCH_WINDOW_MS`: how long a batcher waits for more orders once it has one.
    pub window: Duration,
    /// `POINT_ORDER_BATCH_MAX`: the most orders in one transaction; 1 writes each alone.
    pub batch_max: usize,
    /// `POINT_ORDER_BATCH_LANES`: batchers per replica, each writing one batch at a time.
    pub lanes: usize,
}

impl Default for BatchSettings {
    fn default() -> Self {
        Self {
            window: Duration::ZERO,
            batch_max: 64,
            lanes: 1,
        }
    }
}

/// A point order paid with points, past every check but the balance's.
#[derive(Debug, Clone)]
pub struct PointOrder {
    pub correlation_id: Uuid,
    pub payer: i64,
    pub recipient: i64,
    pub offer: Offer,
    /// What the payer is charged: the offer's points price.
    pub price: BigDecimal,
    /// The occasion found by the request's `point_occasion_id` (the order is then a gift).
    pub occasion_id: Option<String>,
    /// The request's free-text occasion.
    pub occasion: Option<String>,
    pub(super) claim: Option<Claim>,
}

/// What settling an order gave.
#[derive(Debug)]
pub enum Settled {
    /// The order made (boxed: it is most of the answer's size, and every answer moves).
    Made(Box<OrderView>),
    /// Another request holds the order's `Idempotency-Key`: answer with its order.
    KeyTaken,
}

/// An order waiting for its batcher, and where its answer goes.
struct Pending {
    order: PointOrder,
    answer: oneshot::Sender<Result<Settled, PointError>>,
    /// Counts it in [`QUEUED`] until its batch takes it (or it is dropped unsent).
    queued: Option<Queued>,
}

/// One order in [`QUEUED`], for as long as it lives.
struct Queued(());

impl Queued {
    fn new() -> Self {
        metrics::gauge!(QUEUED).increment(1);
        Self(())
    }
}

impl Drop for Queued {
    fn drop(&mut self) {
        metrics::gauge!(QUEUED).decrement(1);
    }
}

/// The replica's batchers; cheap to clone (every worker holds one).
#[derive(Clone)]
pub struct Batcher {
    lanes: Arc<[mpsc::Sender<Pending>]>,
}

impl Batcher {
    /// Starts the batchers on the current runtime. Each stops once every `Batcher` is dropped
    /// and its queue is empty.
    pub fn start(pool: db::Pool, settings: BatchSettings) -> Self {
        // Exported from the start, so that an alert's query finds the series before an order.
        metrics::gauge!(QUEUED).increment(0.0);
        let lanes = (0..settings.lanes.max(1))
            .map(|_| {
                let (sender, queue) = mpsc::channel(QUEUE_CAPACITY);
                tokio::spawn(run(pool.clone(), queue, settings));
                sender
            })
            .collect();
        Self { lanes }
    }

    /// Writes the order in the next batch of its payer's batcher; answers once that commits.
    pub async fn settle(&self, order: PointOrder) -> Result<Settled, PointError> {
        let lane = usize::try_from(order.payer.rem_euclid(self.lanes.len() as i64)).unwrap_or(0);
        let (answer, answered) = oneshot::channel();
        let pending = Pending {
            order,
            answer,
            queued: Some(Queued::new()),
        };
        if self.lanes[lane].send(pending).await.is_err() {
            return Err(PointError::Internal("the batcher has stopped".into()));
        }
        answered
            .await
            .map_err(|_| PointError::Internal("the batcher dropped an order".into()))?
    }
}

/// Orders a batcher's queue holds before a sender waits for room: far more than one batch.
const QUEUE_CAPACITY: usize = 1024;

/// One batcher: gathers a batch, writes it and answers its orders, and again. The orders that
/// come meanwhile wait in the queue: they are the next batch.
async fn run(pool: db::Pool, mut queue: mpsc::Receiver<Pending>, settings: BatchSettings) {
    while let Some(mut batch) = gather::next(&mut queue, settings).await {
        batch
            .iter_mut()
            .for_each(|pending| drop(pending.queued.take()));
        metrics::histogram!(BATCH_SIZE).record(batch.len() as f64);
        // On a task of its own: a panic there drops its orders' answers (each request gets
        // 500), and the batcher goes on with the next batch.
        if let Err(panic) = tokio::spawn(write_and_answer(pool.clone(), batch)).await {
            tracing::error!(
                error.message = %panic,
                "a batch of point orders failed part way; its orders not yet answered get 500"
            );
        }
    }
}

async fn write_and_answer(pool: db::Pool, batch: Vec<Pending>) {
    let orders: Vec<&PointOrder> = batch.iter().map(|pending| &pending.order).collect();
    let outcomes = settle_batch(&pool, &orders).await;
    for (pending, outcome) in batch.into_iter().zip(outcomes) {
        // The request may be gone (its client hung up): its order stands all the same.
        let _ = pending.answer.send(outcome);
    }
}

/// Why a batch's transaction failed.
enum Failed {
    /// The database refused one of its statements (not for being busy): one order's data may
    /// be the cause.
    Refused(PointError),
    /// No connection, the connection lost, the database busy: nothing to do with any order.
    Other(PointError),
}

/// Writes the batch in one transaction. If the database refused a statement of it, writes
/// each order in a transaction of its own, so that a bad order fails alone; any other failure
/// is every order's (written alone, each would meet it again, and wait for it in turn).
async fn settle_batch(pool: &db::Pool, orders: &[&PointOrder]) -> write::Outcomes {
    match in_transaction(pool, orders).await {
        Ok(outcomes) => outcomes,
        Err(Failed::Refused(error)) if orders.len() > 1 => {
            tracing::warn!(
                error.message = %error,
                orders = orders.len(),
                "a batch of point orders failed; writing each in a transaction of its own"
            );
            let mut outcomes = Vec::with_capacity(orders.len());
            for order in orders {
                outcomes.push(match in_transaction(pool, &[*order]).await {
                    Ok(mut alone) => alone.pop().unwrap_or_else(|| {
                        Err(PointError::Internal("an order had no outcome".into()))
                    }),
                    Err(Failed::Refused(error) | Failed::Other(error)) => Err(error),
                });
            }
            outcomes
        }
        Err(Failed::Refused(error) | Failed::Other(error)) => {
            orders.iter().map(|_| Err(again(&error))).collect()
        }
    }
}

/// The same failure for another order of the batch.
fn again(error: &PointError) -> PointError {
    match error {
        PointError::Busy(raw) => PointError::Busy(raw.clone()),
        other => PointError::Internal(other.to_string()),
    }
}

async fn in_transaction(
    pool: &db::Pool,
    orders: &[&PointOrder],
) -> Result<write::Outcomes, Failed> {
    use diesel::result::{DatabaseErrorKind, Error};
    let mut conn = pool.get().await.map_err(|e| Failed::Other(e.into()))?;
    // Only a statement of the batch, refused before the commit was asked for, rolls the batch
    // back for certain. A failed COMMIT (a lost connection, a crash) may have committed it:
    // written again, an order without a key would be made twice.
    let mut refused = false;
    let written = conn
        .transaction::<_, Error, _>(async |conn| {
            write::batch(conn, orders).await.inspect_err(|e| {
                refused = matches!(
                    e,
                    Error::DatabaseError(kind, _)
                        if !matches!(kind, DatabaseErrorKind::ClosedConnection | DatabaseErrorKind::UnableToSendCommand)
                );
            })
        })
        .await;
    written.map_err(|e| match PointError::from(e) {
        busy @ PointError::Busy(_) => Failed::Other(busy),
        error if refused => Failed::Refused(error),
        error => Failed::Other(error),
    })
}
