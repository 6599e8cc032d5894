//! Reading an order's payments back from the payment service: what is known of the order
//! first ([`Plan`], from its attempts), then each payment by id and, when a pay call's answer
//! was lost, by the order's reference ([`Reading`]). A payment that names another order, or
//! another payment than the one asked for, is an [`Anomaly`] and is not applied.

use std::time::Duration;

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use uuid::Uuid;

use super::{ANOMALIES, Anomaly};
use crate::payments::attempts;
use crate::payments::client::{PaymentClient, ReadPayment};
use crate::payments::machine::Attempt;
use crate::payments::webhook::event::canonical_reference;

/// What is known of an order before its payments are read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// The order is final (or gone): nothing to read.
    pub final_: bool,
    /// The payment ids its pay calls were answered with, oldest first, each once.
    pub ids: Vec<String>,
    /// A pay call's answer was lost (or there is no attempt at all): its payments are
    /// found by the order's reference.
    pub by_reference: bool,
    /// A pay call is still waiting for its answer: read again later.
    pub in_flight: bool,
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
    Ok(Plan {
        final_: false,
        ids,
        by_reference: attempts.is_empty() || attempts.contains(&Attempt::Lost),
        in_flight: attempts.contains(&Attempt::InFlight),
    })
}

/// What the payment service said of an order's payments.
#[derive(Debug, Default)]
pub struct Reading {
    /// Payments that belong to the order, each once.
    pub payments: Vec<ReadPayment>,
    /// Something is not known yet: a read failed, an id is unknown to the payment service,
    /// an answer contradicted the question. Why, for the order's `last_error`.
    pub unsure: Option<String>,
}

impl Reading {
    fn unsure(&mut self, why: String) {
        self.unsure.get_or_insert(why);
    }

    /// Adds a payment read once more (by id and by reference) once; two readings of one
    /// payment that disagree decide nothing this time.
    fn add(&mut self, payment: ReadPayment) {
        match self.payments.iter().find(|p| p.id == payment.id) {
            None => self.payments.push(payment),
            Some(seen) if *seen == payment => {}
            Some(_) => self.unsure(format!(
                "payment {} read back twice, differently",
                payment.id
            )),
        }
    }
}

/// Reads the order's payments back, waiting on `pace` before each call.
pub async fn read(
    payments: &PaymentClient,
    correlation_id: Uuid,
    plan: &Plan,
    pace: &mut tokio::time::Interval,
) -> Reading {
    let reference = correlation_id.to_string();
    let mut reading = Reading::default();
    let belongs = |payment: &ReadPayment, reading: &mut Reading| {
        if canonical_reference(&payment.reference) == reference {
            true
        } else {
            anomaly(Anomaly::OtherReference, correlation_id, payment);
            reading.unsure(format!(
                "payment {} read back names another reference",
                payment.id
            ));
            false
        }
    };
    for id in &plan.ids {
        pace.tick().await;
        match payments.payment(id).await {
            Ok(Some(payment)) if payment.id != *id => {
                anomaly(Anomaly::OtherPayment, correlation_id, &payment);
                reading.unsure(format!("payment {id} read back as another payment"));
            }
            Ok(Some(payment)) => {
                if belongs(&payment, &mut reading) {
                    reading.add(payment);
                }
            }
            Ok(None) => reading.unsure(format!("payment {id} is unknown to the payment service")),
            Err(e) => reading.unsure(format!("payment {id}: {e}")),
        }
    }
    if plan.by_reference {
        pace.tick().await;
        match payments.payments_for(&reference).await {
            Ok(found) => {
                for payment in found {
                    if belongs(&payment, &mut reading) {
                        reading.add(payment);
                    }
                }
            }
            Err(e) => reading.unsure(format!("payments of the reference: {e}")),
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

/// The order is still `initial_order`.
pub(super) async fn still_open(
    conn: &mut AsyncPgConnection,
    correlation_id: Uuid,
) -> QueryResult<bool> {
    use crate::db::schema::point_orders;
    let status: Option<String> = point_orders::table
        .find(correlation_id)
        .select(point_orders::status)
        .first(conn)
        .await
        .optional()?;
    Ok(status.as_deref() == Some("initial_order"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::payments::client::ReadStatus;

    fn payment(status: ReadStatus) -> ReadPayment {
        ReadPayment {
            id: "pay_1".into(),
            reference: "r".into(),
            status,
            amount_minor: 1500,
            currency: "SAR".into(),
        }
    }

    #[test]
    fn a_payment_read_twice_alike_counts_once_and_differently_decides_nothing() {
        let mut reading = Reading::default();
        reading.add(payment(ReadStatus::Captured));
        reading.add(payment(ReadStatus::Captured));
        assert_eq!((reading.payments.len(), &reading.unsure), (1, &None));
        reading.add(payment(ReadStatus::Declined));
        assert_eq!(
            reading.unsure.as_deref(),
            Some("payment pay_1 read back twice, differently")
        );
    }
}
