//! The sandbox's rules, free of HTTP: it makes payments and sessions as a card id decides,
//! settles them, and tells the point service after. A payment's status moves when it is
//! captured or declined; its webhook goes out afterwards, on its own, and a delivery that
//! fails leaves the status as it is (the gateway knows what it took whether or not the point
//! service heard).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::sync::{oneshot, watch};

use crate::answers::{PaymentStarted, SessionStarted};
use crate::clock::Clock;
use crate::error::Refusal;
use crate::payments::{
    Charge, Decision, Kind, LATE_UNREAD_COMMIT, Payment, PaymentRequest, SessionRequest, Status,
    Webhook, invalid_charge,
};
use crate::settlements::{self, Cursor, Unreadable};
use crate::store::Store;
use crate::webhook::{Delivered, DeliveryError, Sender};

/// Late cards' payments not made yet, by reference, each with the key it was held under and
/// the flag a read of its reference raises ([`Gateway::commit_late`]).
type Held = HashMap<String, Vec<(u64, watch::Sender<bool>)>>;

#[derive(Clone)]
pub struct Gateway {
    store: Arc<Store>,
    held: Arc<Mutex<Held>>,
    next_held: Arc<AtomicU64>,
    sender: Sender,
    auto_capture: bool,
    public_url: String,
    clock: Clock,
    settlement_page_size: usize,
}

/// What a 3-D Secure button did.
#[derive(Debug)]
pub enum Pressed {
    Unknown,
    /// Nothing done: settled the other way, or its webhook already taken.
    AlreadySettled(Payment),
    /// Settled with the button's outcome (now, or before with its webhook not taken yet)
    /// and its webhook sent now; `None` for a card whose webhook is never sent.
    Settled(Payment, Option<Result<Delivered, DeliveryError>>),
}

impl Gateway {
    pub fn new(
        sender: Sender,
        auto_capture: bool,
        public_url: String,
        clock: Clock,
        settlement_page_size: usize,
    ) -> Self {
        Self {
            store: Arc::default(),
            held: Arc::default(),
            next_held: Arc::default(),
            sender,
            auto_capture,
            public_url,
            clock,
            settlement_page_size,
        }
    }

    fn page_url(&self, payment: &Payment) -> String {
        format!("{}/3ds/{}", self.public_url, payment.id)
    }

    /// A card payment, as its card id decides (the crate's documentation has the table).
    /// A late card's call is answered only once its payment is committed, after its delay.
    pub async fn pay(&self, request: PaymentRequest) -> Result<PaymentStarted, Refusal> {
        invalid_charge(&request.charge)
            .map_or(Ok(()), |why| Err(Refusal::InvalidRequest(why.to_owned())))?;
        if request.source.kind != "card" || request.source.card_id.is_empty() {
            return Err(Refusal::InvalidRequest(
                "source must be {\"type\": \"card\", \"card_id\": …, \"cvv\": …}".to_owned(),
            ));
        }
        if !(3..=4).contains(&request.source.cvv.len()) {
            return Err(Refusal::InvalidRequest(
                "cvv must be 3 or 4 digits".to_owned(),
            ));
        }
        let decision =
            Decision::for_card(&request.source.card_id).map_err(Refusal::InvalidRequest)?;
        tracing::info!(payment.reference = %request.charge.reference, decision = ?decision, "payment requested");
        match decision {
            Decision::Fail4xx => return Err(Refusal::CardDeclined),
            Decision::Fail5xx => return Err(Refusal::GatewayFailed),
            Decision::LateLost { outcome, hold } => {
                // The caller may hang up meanwhile (this future is then dropped): the
                // commit runs on its own and happens all the same.
                let _held = self.commit_late(request.charge, outcome, hold).await;
                return Err(Refusal::AnswerLost);
            }
            Decision::Decline | Decision::Silent | Decision::Lost | Decision::ThreeDSecure => {}
        }
        let payment = Payment::new(
            Kind::Payment,
            request.charge,
            decision.webhook(),
            self.clock.now(),
        );
        self.store.insert(payment.clone());
        let started = |status| PaymentStarted {
            id: payment.id.clone(),
            status,
            redirect_url: (status == Status::Pending).then(|| self.page_url(&payment)),
        };
        match decision {
            Decision::Decline => {
                self.settle_and_notify(&payment.id, Status::Declined);
                Ok(started(Status::Declined))
            }
            // Captured as if its 3-D Secure step passed at once; the client's flow is the
            // usual one (its page shows the payment approved).
            Decision::Silent => {
                self.settle_and_notify(&payment.id, Status::Captured);
                Ok(started(Status::Pending))
            }
            Decision::Lost => {
                self.settle_and_notify(&payment.id, Status::Captured);
                tracing::info!(payment.id = %payment.id, "payment captured; its answer is lost on purpose");
                Err(Refusal::AnswerLost)
            }
            _ => {
                if self.auto_capture {
                    self.settle_and_notify(&payment.id, Status::Captured);
                }
                Ok(started(Status::Pending))
            }
        }
    }

    /// A late card's payment, by a task of its own (so that a caller who hangs up stops
    /// nothing), as a gateway that commits after the caller's first look: made, settled with
    /// `outcome` and with no webhook ever, once `hold` has passed and the charge's reference
    /// has been read back (`by_reference`) since now; with no such read, at
    /// [`LATE_UNREAD_COMMIT`] from now. Until then no read knows of it: it is stored already
    /// settled, never pending. The receiver hears when the hold is over (after the commit, if
    /// a read came during the hold); dropping it changes nothing.
    pub fn commit_late(
        &self,
        charge: Charge,
        outcome: Status,
        hold: Duration,
    ) -> oneshot::Receiver<()> {
        let (read_tx, mut read) = watch::channel(false);
        let key = self.next_held.fetch_add(1, Ordering::Relaxed);
        self.held()
            .entry(charge.reference.clone())
            .or_default()
            .push((key, read_tx));
        let (held, hold_over) = oneshot::channel();
        let gateway = self.clone();
        tokio::spawn(async move {
            let unread = tokio::time::Instant::now() + LATE_UNREAD_COMMIT;
            tokio::time::sleep(hold).await;
            if *read.borrow() {
                gateway.commit_held(key, charge, outcome, "read back during the hold");
                let _ = held.send(());
                return;
            }
            let _ = held.send(());
            // An error is the flag's sender gone: it only goes with the commit below.
            let why = match tokio::time::timeout_at(unread, read.wait_for(|read| *read)).await {
                Ok(_) => "read back after the hold",
                Err(_) => "never read back",
            };
            gateway.commit_held(key, charge, outcome, why);
        });
        hold_over
    }

    /// Makes the late payment held under `key`: stored settled, and held no more.
    fn commit_held(&self, key: u64, charge: Charge, outcome: Status, why: &str) {
        let reference = charge.reference.clone();
        let now = self.clock.now();
        let mut payment = Payment::new(Kind::Payment, charge, Webhook::Never, now);
        payment.settle(outcome, now);
        self.store.insert(payment.clone());
        {
            let mut held = self.held();
            if let Some(waiting) = held.get_mut(&reference) {
                waiting.retain(|(k, _)| *k != key);
                if waiting.is_empty() {
                    held.remove(&reference);
                }
            }
        }
        tracing::info!(
            payment.id = %payment.id,
            payment.reference = %payment.reference,
            outcome = ?outcome,
            why,
            "late payment committed after the caller's first look; its answer is lost on purpose"
        );
    }

    fn held(&self) -> MutexGuard<'_, Held> {
        // Every write is one push, retain or remove: a panic cannot leave half of one.
        self.held.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A payment session: it waits on the 3-D Secure page, or is captured at once with
    /// auto-capture.
    pub fn open_session(&self, request: SessionRequest) -> Result<SessionStarted, Refusal> {
        invalid_charge(&request.charge)
            .map_or(Ok(()), |why| Err(Refusal::InvalidRequest(why.to_owned())))?;
        let payment = Payment::new(
            Kind::Session,
            request.charge,
            Webhook::Due,
            self.clock.now(),
        );
        self.store.insert(payment.clone());
        if self.auto_capture {
            self.settle_and_notify(&payment.id, Status::Captured);
        }
        Ok(SessionStarted {
            id: payment.id.clone(),
            session_token: format!("tok_{}", uuid::Uuid::new_v4().simple()),
            status: Status::Pending,
            remember_me: request.remember_me,
            redirect_url: self.page_url(&payment),
        })
    }

    pub fn payment(&self, id: &str) -> Option<Payment> {
        self.store.get(id)
    }

    /// Every payment made for `reference`; the late payments held for it learn that it was
    /// read (this answer does not hold them: they are made after it).
    pub fn by_reference(&self, reference: &str) -> Vec<Payment> {
        let found = self.store.by_reference(reference);
        if let Some(waiting) = self.held().get(reference) {
            for (_, read) in waiting {
                read.send_replace(true);
            }
        }
        found
    }

    /// The page of the UTC day `day` (`YYYY-MM-DD`) after `cursor`.
    pub fn settlement(
        &self,
        day: &str,
        cursor: Option<&str>,
    ) -> Result<settlements::Page, Unreadable> {
        let day = settlements::parse_day(day)?;
        let cursor = cursor.map(|raw| Cursor::decode(raw, day)).transpose()?;
        Ok(settlements::page(
            self.store.captured_on(day),
            cursor.as_ref(),
            self.settlement_page_size,
        ))
    }

    /// Settles a pending payment now and sends its webhook in the background, with the
    /// provider's retries (unless its card's webhook is never sent).
    fn settle_and_notify(&self, id: &str, outcome: Status) {
        let Some(payment) = self.store.settle(id, outcome, self.clock.now()) else {
            return;
        };
        if payment.webhook != Webhook::Due {
            return;
        }
        let gateway = self.clone();
        tokio::spawn(async move {
            if gateway.sender.send_with_retries(&payment).await {
                gateway.store.delivered(&payment.id);
            }
        });
    }

    /// A 3-D Secure button: settles a pending payment with `outcome` at once, then sends its
    /// webhook and waits for the point service's answer. On a payment already settled with
    /// `outcome` whose webhook was not taken, it sends the webhook again.
    pub async fn press(&self, id: &str, outcome: Status) -> Pressed {
        let payment = match self.store.settle(id, outcome, self.clock.now()) {
            Some(payment) => payment,
            None => match self.store.get(id) {
                None => return Pressed::Unknown,
                Some(p) if p.status == outcome && p.webhook != Webhook::Delivered => p,
                Some(p) => return Pressed::AlreadySettled(p),
            },
        };
        if payment.webhook == Webhook::Never {
            return Pressed::Settled(payment, None);
        }
        let delivery = self.sender.send(&payment).await;
        if matches!(&delivery, Ok(d) if d.taken()) {
            self.store.delivered(&payment.id);
        }
        Pressed::Settled(payment, Some(delivery))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on purpose

    use super::*;
    use crate::payments::CardSource;

    /// A gateway whose webhooks go nowhere (late cards send none).
    fn gateway() -> Gateway {
        let sender = Sender::new(
            "http://127.0.0.1:9/webhooks".into(),
            "secret".into(),
            Duration::from_secs(10),
        )
        .unwrap();
        Gateway::new(sender, false, "http://sandbox".into(), Clock::System, 100)
    }

    fn paid_with(reference: &str, card_id: &str) -> PaymentRequest {
        PaymentRequest {
            charge: Charge {
                reference: reference.into(),
                amount_minor: 1500,
                currency: "SAR".into(),
                customer_id: 1001,
            },
            source: CardSource {
                kind: "card".into(),
                card_id: card_id.into(),
                cvv: "123".into(),
            },
        }
    }

    /// What the store holds for `reference`, without reading it back as a client does (which
    /// would tell its held late payments).
    fn stored(gateway: &Gateway, reference: &str) -> Vec<Payment> {
        gateway.store.by_reference(reference)
    }

    /// In today's settlement.
    fn settled_today(gateway: &Gateway, id: &str) -> bool {
        let today = chrono::Utc::now().date_naive().to_string();
        let settled = gateway.settlement(&today, None).unwrap();
        settled.payments.iter().any(|p| p.id == id)
    }

    // The clock is paused: time moves only when every task waits, straight to the next timer,
    // so "just before" and "at" an instant are exact, not guesses, and a task woken now runs
    // before the clock moves on by even a millisecond.
    #[tokio::test(start_paused = true)]
    async fn a_late_card_is_answered_after_its_hold_and_made_after_the_first_read_back() {
        let gateway = gateway();
        let reference = "order-late";
        let mut pay = std::pin::pin!(gateway.pay(paid_with(reference, "latelost30-card")));
        assert!(
            tokio::time::timeout(Duration::from_millis(29_999), &mut pay)
                .await
                .is_err(),
            "held for its hold"
        );
        assert!(matches!(pay.await, Err(Refusal::AnswerLost)));
        // Nobody has looked: nothing is made, however long it waits (short of ten minutes).
        tokio::time::sleep(Duration::from_secs(300)).await;
        assert!(stored(&gateway, reference).is_empty());
        // The caller's first look finds nothing, and the payment is made right after it.
        assert!(gateway.by_reference(reference).is_empty());
        tokio::time::sleep(Duration::from_millis(1)).await;
        let made = gateway.by_reference(reference);
        assert_eq!(made.len(), 1, "{made:?}");
        let payment = &made[0];
        assert_eq!(
            (payment.status, payment.webhook, payment.amount_minor),
            (Status::Captured, Webhook::Never, 1500)
        );
        assert_eq!(payment.captured_at, Some(payment.updated_at));
        assert_eq!(
            gateway.payment(&payment.id).unwrap().status,
            Status::Captured
        );
        assert!(settled_today(&gateway, &payment.id));
        assert!(gateway.held().is_empty(), "held no more");
    }

    #[tokio::test(start_paused = true)]
    async fn a_read_during_the_hold_makes_the_payment_as_the_hold_ends_though_the_caller_hung_up() {
        let gateway = gateway();
        let reference = "order-hung-up";
        let started = tokio::time::Instant::now();
        // The caller's wait runs out after 1 s and it drops the call, then looks.
        let pay = gateway.pay(paid_with(reference, "latedecline5"));
        assert!(
            tokio::time::timeout(Duration::from_secs(1), pay)
                .await
                .is_err()
        );
        assert!(gateway.by_reference(reference).is_empty());
        tokio::time::sleep_until(started + Duration::from_millis(4_999)).await;
        assert!(stored(&gateway, reference).is_empty());
        tokio::time::sleep_until(started + Duration::from_millis(5_001)).await;
        let made = stored(&gateway, reference);
        assert_eq!(made.len(), 1, "{made:?}");
        assert_eq!(
            (made[0].status, made[0].captured_at, made[0].webhook),
            (Status::Declined, None, Webhook::Never)
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_late_payment_never_read_back_is_made_ten_minutes_after_the_call() {
        let gateway = gateway();
        let reference = "order-unread";
        let started = tokio::time::Instant::now();
        let answered = gateway.pay(paid_with(reference, "latelost1")).await;
        assert!(matches!(answered, Err(Refusal::AnswerLost)));
        tokio::time::sleep_until(started + LATE_UNREAD_COMMIT - Duration::from_millis(1)).await;
        assert!(stored(&gateway, reference).is_empty());
        tokio::time::sleep_until(started + LATE_UNREAD_COMMIT + Duration::from_millis(1)).await;
        let made = stored(&gateway, reference);
        assert_eq!(made.len(), 1, "{made:?}");
        assert!(settled_today(&gateway, &made[0].id));
    }

    #[tokio::test]
    async fn a_late_card_without_its_hold_is_refused_and_makes_nothing() {
        let gateway = gateway();
        for card in ["latelost", "latedecline0", "latelost601-x"] {
            let refused = gateway.pay(paid_with("order-bad-late", card)).await;
            assert!(
                matches!(&refused, Err(Refusal::InvalidRequest(why)) if why.contains("1 to 600")),
                "{card}: {refused:?}"
            );
        }
        assert!(gateway.by_reference("order-bad-late").is_empty());
    }
}
