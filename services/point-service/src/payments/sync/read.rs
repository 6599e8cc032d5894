//! Reading an order's payments back from the payment service: what is known of the order
//! first ([`Plan`], from its attempts), then each payment by id and, when a pay call's answer
//! was lost, by the order's reference ([`Reading`]). A payment that names another order, or
//! another payment than the one asked for, is an [`Anomaly`] and is not applied.

use std::time::Duration;

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use uuid::Uuid;

use super::reading::{Read, Reading, Via};
use super::{ANOMALIES, Anomaly};
use crate::orders::Status;
use crate::payments::attempts;
use crate::payments::client::{PaymentClient, ReadPayment};
use crate::payments::machine::Attempt;
use crate::payments::webhook::event::canonical_reference;

/// The most pages of one reference's payments read in one pass: a reference has a payment
/// per pay call, and pay calls are bounded per order, so more means a gateway gone wrong.
pub const MAX_REFERENCE_PAGES: usize = 20;

/// What is known of an order before its payments are read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// The order is final (or gone): nothing to read.
    pub final_: bool,
    /// The payment ids its pay calls were answered with, oldest first, each once.
    pub ids: Vec<String>,
    /// Its pay calls whose answer was lost: each may have made a payment whose id we never
    /// learned, and which the payment service may commit after our first read.
    pub lost: usize,
    /// A pay call's answer was lost (or there is no attempt at all): its payments are
    /// found by the order's reference.
    pub by_reference: bool,
    /// A pay call is still waiting for its answer: read again later.
    pub in_flight: bool,
}

impl Plan {
    /// How many lost pay calls no payment read back accounts for: a payment of the order
    /// that no answered attempt names is a lost call's (a 4xx made none). While one is
    /// left, its payment may still appear: finding nothing is not final.
    pub fn lost_unaccounted(&self, reading: &Reading) -> usize {
        self.lost.saturating_sub(self.unnamed(reading).count())
    }

    /// The payments read that no answered attempt names: a lost call's, or another order's.
    pub fn unnamed<'r>(&self, reading: &'r Reading) -> impl Iterator<Item = &'r ReadPayment> {
        reading
            .reads()
            .map(|read| &read.payment)
            .filter(|payment| !self.ids.contains(&payment.id))
    }
}

/// The order's [`Plan`] from its status and attempts. `window` is how long a pay call's
/// attempt counts as in flight.
pub async fn plan(
    conn: &mut AsyncPgConnection,
    correlation_id: Uuid,
    window: Duration,
) -> QueryResult<Plan> {
    if !still_open(conn, correlation_id).await? {
        return Ok(Plan {
            final_: true,
            ids: Vec::new(),
            lost: 0,
            by_reference: false,
            in_flight: false,
        });
    }
    let attempts = attempts::of_order(conn, correlation_id, window).await?;
    let mut ids: Vec<String> = Vec::new();
    for attempt in &attempts {
        if let Attempt::Answered(id) = attempt
            && !ids.contains(id)
        {
            ids.push(id.clone());
        }
    }
    let lost = attempts.iter().filter(|a| **a == Attempt::Lost).count();
    Ok(Plan {
        final_: false,
        ids,
        lost,
        by_reference: attempts.is_empty() || lost > 0,
        in_flight: attempts.contains(&Attempt::InFlight),
    })
}

/// Reads the order's payments back, waiting on `pace` before each call, and asking no more
/// once `budget` has passed (each call is bounded by the client's timeout too): a sync
/// that outlived the order's lease would meet another worker on the order.
pub async fn read(
    payments: &PaymentClient,
    correlation_id: Uuid,
    plan: &Plan,
    pace: &mut tokio::time::Interval,
    budget: Duration,
) -> Reading {
    let reference = correlation_id.to_string();
    let mut reading = Reading::default();
    let deadline = tokio::time::Instant::now() + budget;
    let out_of_time = |reading: &mut Reading| {
        let late = tokio::time::Instant::now() >= deadline;
        if late {
            reading.unsure(format!(
                "the payment service's reads took longer than {} s",
                budget.as_secs()
            ));
        }
        late
    };
    let add = |payment: ReadPayment, via: Via, reading: &mut Reading| {
        if canonical_reference(&payment.reference) == reference {
            reading.add(Read { payment, via });
        } else {
            anomaly(Anomaly::OtherReference, correlation_id, &payment);
            reading.unsure(format!(
                "payment {} read back names another reference",
                payment.id
            ));
        }
    };
    for id in &plan.ids {
        if out_of_time(&mut reading) {
            return reading;
        }
        pace.tick().await;
        match payments.payment(id).await {
            Ok(Some(payment)) if payment.id != *id => {
                anomaly(Anomaly::OtherPayment, correlation_id, &payment);
                reading.unsure(format!("payment {id} read back as another payment"));
            }
            Ok(Some(payment)) => add(payment, Via::ById, &mut reading),
            Ok(None) => reading.unsure(format!("payment {id} is unknown to the payment service")),
            Err(e) => reading.unsure(format!("payment {id}: {e}")),
        }
    }
    if plan.by_reference {
        // Every page: a payment left on a later one could be the lost call's.
        let mut cursor: Option<String> = None;
        for page in 1.. {
            if page > MAX_REFERENCE_PAGES {
                reading.unsure(format!(
                    "payments of the reference: more than {MAX_REFERENCE_PAGES} pages"
                ));
                break;
            }
            if out_of_time(&mut reading) {
                break;
            }
            pace.tick().await;
            match payments.payments_for(&reference, cursor.as_deref()).await {
                Ok(list) => {
                    for payment in list.data {
                        add(payment, Via::ByReference, &mut reading);
                    }
                    cursor = list.next;
                    if cursor.is_none() {
                        break;
                    }
                }
                Err(e) => {
                    reading.unsure(format!("payments of the reference: {e}"));
                    break;
                }
            }
        }
    }
    reading
}

fn anomaly(kind: Anomaly, correlation_id: Uuid, payment: &ReadPayment) {
    metrics::counter!(ANOMALIES, "kind" => kind.as_str()).increment(1);
    tracing::error!(
        order.id = %correlation_id, payment.id = %payment.id,
        payment.reference = %payment.reference, kind = kind.as_str(),
        "payment read back contradicts the question; not applied (is the payment service answering for another order?)"
    );
}

/// Of the payments `ids` read back under `correlation_id`'s reference, those that another
/// order's pay call was answered with: a payment service that filed another order's payment
/// under ours. Applying one would decide our order by someone else's payment (its decline
/// would fail ours; its capture would stand for our lost call's payment).
pub async fn answered_elsewhere(
    conn: &mut AsyncPgConnection,
    correlation_id: Uuid,
    ids: Vec<String>,
) -> QueryResult<Vec<String>> {
    use crate::db::schema::payment_attempts;
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    payment_attempts::table
        .filter(payment_attempts::payment_id.eq_any(ids))
        .filter(payment_attempts::correlation_id.ne(correlation_id))
        .select(payment_attempts::payment_id.assume_not_null())
        .distinct()
        .load(conn)
        .await
}

/// The order is still `initial_order`.
pub(super) async fn still_open(
    conn: &mut AsyncPgConnection,
    correlation_id: Uuid,
) -> QueryResult<bool> {
    use crate::db::schema::point_orders;
    let status: Option<Status> = point_orders::table
        .find(correlation_id)
        .select(point_orders::status)
        .first(conn)
        .await
        .optional()?;
    Ok(status == Some(Status::Open))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::payments::client::ReadStatus;
    use crate::payments::sync::reading::{Read, Via};

    fn read(status: ReadStatus, id: &str) -> Read {
        Read {
            payment: ReadPayment {
                id: id.into(),
                reference: "r".into(),
                status,
                amount_minor: 1500,
                currency: "SAR".into(),
            },
            via: Via::ByReference,
        }
    }

    #[test]
    fn a_lost_call_is_accounted_for_only_by_a_payment_no_answer_named() {
        let plan = Plan {
            final_: false,
            ids: vec!["pay_1".into()],
            lost: 1,
            by_reference: true,
            in_flight: false,
        };
        let mut reading = Reading::default();
        reading.add(read(ReadStatus::Declined, "pay_1"));
        assert_eq!(
            plan.lost_unaccounted(&reading),
            1,
            "pay_1 is the answered call's"
        );
        reading.add(read(ReadStatus::Captured, "pay_2"));
        assert_eq!(plan.lost_unaccounted(&reading), 0);
    }
}
