//! The sandbox's rules, free of HTTP: it makes payments and sessions as a card id decides,
//! settles them, and tells the point service after. A payment's status moves when it is
//! captured or declined; its webhook goes out afterwards, on its own, and a delivery that
//! fails leaves the status as it is (the gateway knows what it took whether or not the point
//! service heard).

use std::sync::Arc;

use crate::answers::{PaymentStarted, SessionStarted};
use crate::clock::Clock;
use crate::error::Refusal;
use crate::payments::{
    Decision, Kind, Payment, PaymentRequest, SessionRequest, Status, Webhook, invalid_charge,
};
use crate::settlements::{self, Cursor, Unreadable};
use crate::store::Store;
use crate::webhook::{Delivered, DeliveryError, Sender};

#[derive(Clone)]
pub struct Gateway {
    store: Arc<Store>,
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
    pub fn pay(&self, request: PaymentRequest) -> Result<PaymentStarted, Refusal> {
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
        let decision = Decision::for_card(&request.source.card_id);
        tracing::info!(payment.reference = %request.charge.reference, decision = ?decision, "payment requested");
        match decision {
            Decision::Fail4xx => return Err(Refusal::CardDeclined),
            Decision::Fail5xx => return Err(Refusal::GatewayFailed),
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

    pub fn by_reference(&self, reference: &str) -> Vec<Payment> {
        self.store.by_reference(reference)
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
