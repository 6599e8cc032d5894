//! Every payment and session of this process, in the order they were made. State lives in
//! memory: the sandbox runs as one replica and forgets everything on restart.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

use chrono::{DateTime, NaiveDate, Utc};

use crate::payments::{Payment, Status, Webhook};

#[derive(Default)]
pub struct Store {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    /// In the order made.
    payments: Vec<Payment>,
    /// A payment's place in `payments`, by id.
    index: HashMap<String, usize>,
}

impl Inner {
    fn get_mut(&mut self, id: &str) -> Option<&mut Payment> {
        let at = *self.index.get(id)?;
        self.payments.get_mut(at)
    }
}

impl Store {
    pub fn insert(&self, payment: Payment) {
        let mut inner = self.lock();
        let at = inner.payments.len();
        inner.index.insert(payment.id.clone(), at);
        inner.payments.push(payment);
    }

    pub fn get(&self, id: &str) -> Option<Payment> {
        let inner = self.lock();
        inner.index.get(id).map(|&at| inner.payments[at].clone())
    }

    /// Moves a pending payment to `outcome` at `now` and answers it as it now is; `None`
    /// when there is no such payment or it was not pending.
    pub fn settle(&self, id: &str, outcome: Status, now: DateTime<Utc>) -> Option<Payment> {
        let mut inner = self.lock();
        let payment = inner.get_mut(id)?;
        payment.settle(outcome, now).then(|| payment.clone())
    }

    /// Records that the point service took the payment's webhook (a payment whose webhook
    /// is never sent stays so).
    pub fn delivered(&self, id: &str) {
        if let Some(payment) = self.lock().get_mut(id)
            && payment.webhook == Webhook::Due
        {
            payment.webhook = Webhook::Delivered;
        }
    }

    /// Every payment and session made for `reference`, oldest first.
    pub fn by_reference(&self, reference: &str) -> Vec<Payment> {
        self.lock()
            .payments
            .iter()
            .filter(|p| p.reference == reference)
            .cloned()
            .collect()
    }

    /// The payments captured on the UTC day `day`, by capture time then id.
    pub fn captured_on(&self, day: NaiveDate) -> Vec<Payment> {
        let mut captured: Vec<Payment> = self
            .lock()
            .payments
            .iter()
            .filter(|p| p.captured_at.is_some_and(|at| at.date_naive() == day))
            .cloned()
            .collect();
        captured.sort_by(|a, b| (a.captured_at, &a.id).cmp(&(b.captured_at, &b.id)));
        captured
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // Every write above is one assignment or push: a panic cannot leave half of one.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;
    use crate::payments::{Charge, Kind};

    fn made(reference: &str) -> Payment {
        let charge = Charge {
            reference: reference.into(),
            amount_minor: 100,
            currency: "SAR".into(),
            customer_id: 1,
        };
        Payment::new(Kind::Payment, charge, Webhook::Due, Utc::now())
    }

    #[test]
    fn captures_are_listed_by_their_utc_day_in_time_then_id_order() {
        let store = Store::default();
        let day = |d, h, m| Utc.with_ymd_and_hms(2026, 3, d, h, m, 0).unwrap();
        let (a, b, c, late, other) = (made("r"), made("r"), made("r"), made("r"), made("r"));
        let pending = made("r");
        for p in [&a, &b, &c, &late, &other, &pending] {
            store.insert(p.clone());
        }
        store.settle(&c.id, Status::Captured, day(1, 10, 0));
        store.settle(&a.id, Status::Captured, day(1, 9, 0));
        store.settle(&b.id, Status::Captured, day(1, 9, 0));
        store.settle(&late.id, Status::Captured, day(1, 23, 59));
        store.settle(&other.id, Status::Captured, day(2, 0, 0));
        let listed: Vec<String> = store
            .captured_on(NaiveDate::from_ymd_opt(2026, 3, 1).unwrap())
            .into_iter()
            .map(|p| p.id)
            .collect();
        let (first, second) = if a.id < b.id { (&a, &b) } else { (&b, &a) };
        assert_eq!(
            listed,
            [&first.id, &second.id, &c.id, &late.id].map(String::clone)
        );
        assert_eq!(store.by_reference("r").len(), 6);
        assert!(store.by_reference("x").is_empty());
    }

    #[test]
    fn a_payment_never_sent_stays_so() {
        let store = Store::default();
        let mut silent = made("r");
        silent.webhook = Webhook::Never;
        store.insert(silent.clone());
        store.delivered(&silent.id);
        assert_eq!(store.get(&silent.id).unwrap().webhook, Webhook::Never);
    }
}
