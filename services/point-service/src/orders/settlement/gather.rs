//! How a settler gathers its next batch from its queue.

use std::collections::VecDeque;

use tokio::sync::mpsc;

use super::{Pending, SettlementSettings};

/// The next batch: first the orders an earlier batch held back, then the queue's. An order
/// whose caller and key are already in the batch is held back for the next one, where it
/// finds the first one's order (or, if that was refused, is decided afresh), as it would have
/// had it come a moment later. `None` once the queue is closed and empty.
pub(super) async fn next(
    queue: &mut mpsc::Receiver<Pending>,
    held_back: &mut VecDeque<Pending>,
    settings: SettlementSettings,
) -> Option<Vec<Pending>> {
    let mut batch: Vec<Pending> = Vec::new();
    let admits = |batch: &[Pending], next: &Pending| {
        batch.len() < settings.batch_max
            && next.order.claim.as_ref().is_none_or(|claim| {
                !batch.iter().any(|p| {
                    p.order
                        .claim
                        .as_ref()
                        .is_some_and(|c| c.caller == claim.caller && c.key == claim.key)
                })
            })
    };
    for pending in std::mem::take(held_back) {
        if admits(&batch, &pending) {
            batch.push(pending);
        } else {
            held_back.push_back(pending);
        }
    }
    if batch.is_empty() {
        batch.push(queue.recv().await?);
    }
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
            Some(next) if admits(&batch, &next) => batch.push(next),
            Some(next) => held_back.push_back(next),
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
    use crate::orders::idempotency::Claim;
    use crate::orders::settlement::PointOrder;

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
        }
    }

    fn settings(window_ms: u64, batch_max: usize) -> SettlementSettings {
        SettlementSettings {
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
        let mut held = VecDeque::new();
        let first = next(&mut queue, &mut held, settings(0, 3)).await.unwrap();
        assert_eq!(payers(&first), [1, 2, 3]);
        let second = next(&mut queue, &mut held, settings(0, 3)).await.unwrap();
        assert_eq!(
            payers(&second),
            [4, 5],
            "takes what waits, waits for nothing more"
        );
        drop(sender);
        assert!(next(&mut queue, &mut held, settings(0, 3)).await.is_none());
    }

    #[tokio::test]
    async fn a_key_already_in_the_batch_waits_for_the_next_one_and_leads_it() {
        let (sender, mut queue) = mpsc::channel(16);
        sender.send(pending(1, Some("k"))).await.unwrap();
        sender.send(pending(1, Some("k"))).await.unwrap();
        sender.send(pending(2, Some("k"))).await.unwrap();
        sender.send(pending(1, None)).await.unwrap();
        let mut held = VecDeque::new();
        let first = next(&mut queue, &mut held, settings(0, 10)).await.unwrap();
        // Another caller's key of the same name is another key.
        assert_eq!(payers(&first), [1, 2, 1]);
        assert_eq!(held.len(), 1);
        sender.send(pending(3, None)).await.unwrap();
        let second = next(&mut queue, &mut held, settings(0, 10)).await.unwrap();
        assert_eq!(payers(&second), [1, 3]);
        assert!(
            second[0].order.claim.is_some(),
            "the held-back order comes first"
        );
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
        let mut held = VecDeque::new();
        let started = tokio::time::Instant::now();
        let batch = next(&mut queue, &mut held, settings(5, 10)).await.unwrap();
        assert_eq!(
            payers(&batch),
            [1, 2],
            "the order 3 ms late is in, 13 ms late is not"
        );
        assert_eq!(started.elapsed(), Duration::from_millis(5));
    }
}
