//! Batched settlement: point orders paid with points, checked and ready to write, are
//! written many to one transaction (docs/decisions.md, "Batched settlement"). A hot payer's
//! orders then share one lock of the payer's account and one commit instead of queueing for
//! them one by one.
//!
//! Each replica runs `lanes` settlers; a payer's orders always go to the same one (by payer
//! id), so they are applied in the order they arrived. A settler takes the orders waiting for
//! it, at most `batch_max`, waiting up to `window` for more once it has the first, and
//! writes them together (`batch`). While a batch is written the next one gathers. Nothing is
//! answered before its batch commits: a crash before the commit leaves no order acknowledged
//! and none applied. A batch that fails for a reason other than the database being busy is
//! written again one order per transaction, so a bad order fails alone.

mod batch;
mod gather;

use std::collections::VecDeque;
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
pub const BATCH_ORDERS: &str = "point_settlement_batch_orders";

/// Orders waiting for a batch: one that grows says the batches are slower than the orders.
pub const QUEUED: &str = "point_settlement_queued_orders";

/// The settlers' pace (`POINT_SETTLEMENT_*`, `config`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SettlementSettings {
    /// `POINT_SETTLEMENT_WINDOW_MS`: how long a settler waits for more orders once it has one.
    pub window: Duration,
    /// `POINT_SETTLEMENT_BATCH_MAX`: the most orders in one transaction; 1 writes each alone.
    pub batch_max: usize,
    /// `POINT_SETTLEMENT_LANES`: settlers per replica, each writing one batch at a time.
    pub lanes: usize,
}

impl Default for SettlementSettings {
    fn default() -> Self {
        Self {
            window: Duration::ZERO,
            batch_max: 64,
            lanes: 2,
        }
    }
}

/// A point order paid with points, past every check but the balance's.
#[derive(Debug)]
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
    Made(OrderView),
    /// Another request holds the order's `Idempotency-Key`: answer with its order.
    KeyTaken,
}

/// An order waiting for its settler, and where its answer goes.
struct Pending {
    order: PointOrder,
    answer: oneshot::Sender<Result<Settled, PointError>>,
}

/// The replica's settlers; cheap to clone (every worker holds one).
#[derive(Clone)]
pub struct Settler {
    lanes: Arc<[mpsc::Sender<Pending>]>,
}

impl Settler {
    /// Starts the settlers on the current runtime. Each stops once every `Settler` is dropped
    /// and its queue is empty.
    pub fn start(pool: db::Pool, settings: SettlementSettings) -> Self {
        let lanes = (0..settings.lanes.max(1))
            .map(|_| {
                let (sender, queue) = mpsc::channel(QUEUE_CAPACITY);
                tokio::spawn(run(pool.clone(), queue, settings));
                sender
            })
            .collect();
        Self { lanes }
    }

    /// Writes the order in the next batch of its payer's settler; answers once that commits.
    pub async fn settle(&self, order: PointOrder) -> Result<Settled, PointError> {
        let lane = usize::try_from(order.payer.rem_euclid(self.lanes.len() as i64)).unwrap_or(0);
        let (answer, answered) = oneshot::channel();
        metrics::gauge!(QUEUED).increment(1);
        if self.lanes[lane]
            .send(Pending { order, answer })
            .await
            .is_err()
        {
            metrics::gauge!(QUEUED).decrement(1);
            return Err(PointError::Internal("the settler has stopped".into()));
        }
        answered
            .await
            .map_err(|_| PointError::Internal("the settler dropped an order".into()))?
    }
}

/// Orders a settler's queue holds before a sender waits for room: far more than one batch.
const QUEUE_CAPACITY: usize = 1024;

/// One settler: gathers a batch, writes it, answers its orders, and again.
async fn run(pool: db::Pool, mut queue: mpsc::Receiver<Pending>, settings: SettlementSettings) {
    let mut held_back = VecDeque::new();
    while let Some(batch) = gather::next(&mut queue, &mut held_back, settings).await {
        metrics::gauge!(QUEUED).decrement(batch.len() as f64);
        metrics::histogram!(BATCH_ORDERS).record(batch.len() as f64);
        let orders: Vec<&PointOrder> = batch.iter().map(|pending| &pending.order).collect();
        let outcomes = settle_batch(&pool, &orders).await;
        for (pending, outcome) in batch.into_iter().zip(outcomes) {
            // The request may be gone (its client hung up): its order stands all the same.
            let _ = pending.answer.send(outcome);
        }
    }
}

/// Writes the batch in one transaction; if that fails for a reason the database being busy
/// does not explain, writes each order in one of its own, so that one bad order fails alone.
async fn settle_batch(pool: &db::Pool, orders: &[&PointOrder]) -> batch::Outcomes {
    match in_transaction(pool, orders).await {
        Ok(outcomes) => outcomes,
        Err(PointError::Busy(message)) => orders
            .iter()
            .map(|_| Err(PointError::Busy(message.clone())))
            .collect(),
        Err(error) if orders.len() > 1 => {
            tracing::warn!(
                error.message = %error,
                orders = orders.len(),
                "a batch of point orders failed; writing each in a transaction of its own"
            );
            let mut outcomes = Vec::with_capacity(orders.len());
            for order in orders {
                outcomes.push(match in_transaction(pool, &[order]).await {
                    Ok(mut alone) => alone.pop().unwrap_or_else(|| {
                        Err(PointError::Internal("an order had no outcome".into()))
                    }),
                    Err(error) => Err(error),
                });
            }
            outcomes
        }
        Err(error) => vec![Err(error)],
    }
}

async fn in_transaction(
    pool: &db::Pool,
    orders: &[&PointOrder],
) -> Result<batch::Outcomes, PointError> {
    let mut conn = pool.get().await?;
    conn.transaction::<_, PointError, _>(async |conn| batch::write(conn, orders).await)
        .await
}
