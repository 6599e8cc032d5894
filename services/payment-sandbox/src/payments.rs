//! Payments and sessions the sandbox has been asked for, and what a card id makes of them.

use std::collections::HashMap;
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

/// What a card id asks the sandbox to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Accepted, then declined by webhook.
    Decline,
    /// Refused at once with 402.
    Fail4xx,
    /// The payment service itself fails: 500.
    Fail5xx,
    /// Waits on the 3-D Secure page (or auto-captures).
    ThreeDSecure,
}

impl Decision {
    pub fn for_card(card_id: &str) -> Self {
        if card_id.starts_with("decline") {
            Self::Decline
        } else if card_id.starts_with("fail4xx") {
            Self::Fail4xx
        } else if card_id.starts_with("fail5xx") {
            Self::Fail5xx
        } else {
            Self::ThreeDSecure
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Pending,
    Captured,
    Declined,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Payment,
    Session,
}

/// The part of a request both `/v1/payments` and `/v1/payment-sessions` carry.
#[derive(Debug, Clone, Deserialize)]
pub struct Charge {
    pub reference: String,
    pub amount_minor: i64,
    pub currency: String,
    pub customer_id: i64,
}

#[derive(Debug, Clone, Deserialize)]
pub struct CardSource {
    #[serde(rename = "type")]
    pub kind: String,
    pub card_id: String,
    /// Required like the real service; never stored or logged.
    pub cvv: String,
}

#[derive(Debug, Clone, Deserialize)]
pub struct PaymentRequest {
    #[serde(flatten)]
    pub charge: Charge,
    pub source: CardSource,
}

#[derive(Debug, Clone, Deserialize)]
pub struct SessionRequest {
    #[serde(flatten)]
    pub charge: Charge,
    #[serde(default)]
    pub remember_me: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct Payment {
    pub id: String,
    pub kind: Kind,
    pub status: Status,
    pub reference: String,
    pub amount_minor: i64,
    pub currency: String,
    pub customer_id: i64,
}

impl Payment {
    pub fn new(kind: Kind, charge: Charge) -> Self {
        let prefix = match kind {
            Kind::Payment => "pay",
            Kind::Session => "ses",
        };
        Self {
            id: format!("{prefix}_{}", uuid::Uuid::new_v4().simple()),
            kind,
            status: Status::Pending,
            reference: charge.reference,
            amount_minor: charge.amount_minor,
            currency: charge.currency,
            customer_id: charge.customer_id,
        }
    }

    /// "15.00 SAR" from 1500 halalas.
    pub fn amount_text(&self) -> String {
        format!(
            "{}.{:02} {}",
            self.amount_minor / 100,
            self.amount_minor % 100,
            self.currency
        )
    }
}

/// Why a request is refused with 422 before anything is stored.
pub fn invalid_charge(charge: &Charge) -> Option<&'static str> {
    let safe = |s: &str| {
        !s.is_empty()
            && s.len() <= 64
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b':'))
    };
    if !safe(&charge.reference) {
        Some("reference must be 1 to 64 letters, digits, '-', '_' or ':'")
    } else if charge.amount_minor <= 0 {
        Some("amount_minor must be a positive integer")
    } else if charge.currency.len() != 3 || !charge.currency.bytes().all(|b| b.is_ascii_uppercase())
    {
        Some("currency must be a three-letter ISO code")
    } else if charge.customer_id <= 0 {
        Some("customer_id must be a positive integer")
    } else {
        None
    }
}

/// Every payment and session of this process.
#[derive(Default)]
pub struct Store {
    payments: Mutex<HashMap<String, Payment>>,
}

impl Store {
    pub fn insert(&self, payment: Payment) {
        self.lock().insert(payment.id.clone(), payment);
    }

    pub fn get(&self, id: &str) -> Option<Payment> {
        self.lock().get(id).cloned()
    }

    /// Moves a pending payment to `status`; `false` when it was not pending.
    pub fn settle(&self, id: &str, status: Status) -> bool {
        match self.lock().get_mut(id) {
            Some(payment) if payment.status == Status::Pending => {
                payment.status = status;
                true
            }
            _ => false,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Payment>> {
        // A panic while holding the lock cannot leave a half-written map entry.
        self.payments
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn card_ids_choose_the_outcome() {
        assert_eq!(Decision::for_card("decline-1"), Decision::Decline);
        assert_eq!(Decision::for_card("fail4xx"), Decision::Fail4xx);
        assert_eq!(Decision::for_card("fail5xx-x"), Decision::Fail5xx);
        assert_eq!(Decision::for_card("card_visa_4242"), Decision::ThreeDSecure);
    }

    #[test]
    fn amounts_are_shown_in_major_units() {
        let charge = Charge {
            reference: "r".into(),
            amount_minor: 1505,
            currency: "SAR".into(),
            customer_id: 1,
        };
        assert_eq!(
            Payment::new(Kind::Payment, charge).amount_text(),
            "15.05 SAR"
        );
    }
}
