//! How a batcher gathers its next batch from its queue.

use tokio::sync::mpsc;

use super::{BatchSettings, Pending};

/// The next batch: the first order to come, then those waiting behind it, up to `batch_max`,
/// waiting up to `window` for more. `None` once the queue is closed and empty.
pub(super) async fn next(
    queue: &mut mpsc::Receiver<Pending>,
    settings: BatchSettings,
) -> Option<Vec<Pending>> {
    let mut batch = vec![queue.recv().await?];
    let deadline = tokio::time::Instant::now() + settings.window;
    while batch.len() < settings.batch_max {
        let next = match queue.try_recv() {
            Ok(next) => Some(next),
            Err(_) if settings.window.is_zero() => None,
            Err(_) => tokio::time::timeout_at(deadline, queue.recv())
                .await
                .ok()
                .flatten(),
        };
        match next {
            Some(next) => batch.push(next),
            None => break,
        }
    }
    Some(batch)
}

#[cfg(test)]
mod tests {
    use std::str::FromStr;
    use std::time::Duration;

    use bigdecimal::BigDecimal;
    use relayed_routes::offers::Offer;
    use tokio::sync::oneshot;
    use uuid::Uuid;

    use super::*;
    use crate::orders::batches::PointOrder;
    use crate::orders::idempotency::Claim;

    fn pending(payer: i64, key: Option<&str>) -> Pending {
        let price = BigDecimal::from_str("12.5").unwrap();
        Pending {
            order: PointOrder {
                correlation_id: Uuid::new_v4(),
                payer,
                recipient: payer + 1,
                offer: Offer {
                    id: "64b7f0c2a1b2c3d4e5f60718".into(),
                    point_amount: price.clone(),
                    purchased_point_amount: Some(price.clone()),
                    amount: price.clone(),
                },
                price,
                occasion_id: None,
                occasion: None,
                claim: key.map(|key| Claim {
                    caller: payer,
                    key: key.into(),
                    fingerprint: Vec::new(),
                }),
            },
            answer: oneshot::channel().0,
            queued: None,
        }
    }

    fn settings(window_ms: u64, batch_max: usize) -> BatchSettings {
        BatchSettings {
            window: Duration::from_millis(window_ms),
            batch_max,
            lanes: 1,
        }
    }

    fn payers(batch: &[Pending]) -> Vec<i64> {
        batch.iter().map(|p| p.order.payer).collect()
    }

    #[tokio::test]
    async fn without_a_window_a_batch_is_what_waits_at_most_batch_max() {
        let (sender, mut queue) = mpsc::channel(16);
        for payer in 1..=5 {
            sender.send(pending(payer, None)).await.unwrap();
        }
        let first = next(&mut queue, settings(0, 3)).await.unwrap();
        assert_eq!(payers(&first), [1, 2, 3]);
        let second = next(&mut queue, settings(0, 3)).await.unwrap();
        assert_eq!(
            payers(&second),
            [4, 5],
            "takes what waits, waits for nothing more"
        );
        drop(sender);
        assert!(next(&mut queue, settings(0, 3)).await.is_none());
    }

    #[tokio::test(start_paused = true)]
    async fn a_window_waits_for_more_orders_until_it_closes() {
        let (sender, mut queue) = mpsc::channel(16);
        sender.send(pending(1, None)).await.unwrap();
        let late = sender.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(3)).await;
            late.send(pending(2, None)).await.unwrap();
            tokio::time::sleep(Duration::from_millis(10)).await;
            late.send(pending(3, None)).await.unwrap();
        });
        let started = tokio::time::Instant::now();
        let batch = next(&mut queue, settings(5, 10)).await.unwrap();
        assert_eq!(
            payers(&batch),
            [1, 2],
            "the order 3 ms late is in, 13 ms late is not"
        );
        assert_eq!(started.elapsed(), Duration::from_millis(5));
    }
}
