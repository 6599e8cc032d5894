//! Payments and sessions the sandbox has been asked for, and what a card id makes of them.

use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// What a card id asks the sandbox to do (the crate's documentation has the table).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Accepted, declined at once, the decline sent by webhook.
    Decline,
    /// Refused at once with 402.
    Fail4xx,
    /// The payment service itself fails: 500.
    Fail5xx,
    /// Captured at once, answered like a 3-D Secure payment, and its webhook never sent.
    Silent,
    /// Captured at once with no webhook, and the answer lost on the way back: 502.
    Lost,
    /// A slow gateway whose answer is lost, and which commits the payment after the
    /// caller's first look: the call is held `hold` (past the caller's wait) and answered
    /// 502; the payment (settled with `outcome`, captured or declined, no webhook) is made
    /// only once `hold` has passed and its reference has been read back since the call (that
    /// read found nothing), or [`LATE_UNREAD_COMMIT`] after the call if no read comes.
    LateLost { outcome: Status, hold: Duration },
    /// Waits on the 3-D Secure page (or auto-captures).
    ThreeDSecure,
}

/// The card id prefixes of [`Decision::LateLost`], each followed by the hold in seconds
/// (`latelost12-soak`, `latedecline45`), and the outcome the payment is committed with.
/// No other prefix starts with `late`, nor is `late` the start of another, so their order
/// against the others does not matter.
pub const LATE_PREFIXES: [(&str, Status); 2] = [
    ("latelost", Status::Captured),
    ("latedecline", Status::Declined),
];

/// The longest hold a late card may name, in seconds.
pub const MAX_LATE_SECONDS: u64 = 600;

/// When a late card's payment is made if its reference is never read back: this long after
/// the call (a gateway does commit in the end).
pub const LATE_UNREAD_COMMIT: Duration = Duration::from_secs(600);

impl Decision {
    /// What the card id asks for; why not, when it is a late card without a valid hold
    /// (a 422).
    pub fn for_card(card_id: &str) -> Result<Self, String> {
        // Checked in this order: a prefix listed later never starts with an earlier one.
        const PREFIXES: [(&str, Decision); 5] = [
            ("decline", Decision::Decline),
            ("fail4xx", Decision::Fail4xx),
            ("fail5xx", Decision::Fail5xx),
            ("silent", Decision::Silent),
            ("lost", Decision::Lost),
        ];
        for (prefix, outcome) in LATE_PREFIXES {
            let Some(rest) = card_id.strip_prefix(prefix) else {
                continue;
            };
            let digits = &rest[..rest.bytes().take_while(u8::is_ascii_digit).count()];
            return match digits.parse::<u64>() {
                Ok(seconds) if (1..=MAX_LATE_SECONDS).contains(&seconds) => Ok(Self::LateLost {
                    outcome,
                    hold: Duration::from_secs(seconds),
                }),
                _ => Err(format!(
                    "a {prefix} card id names its hold in seconds, 1 to {MAX_LATE_SECONDS}, right \
                     after the prefix (e.g. {prefix}30-card)"
                )),
            };
        }
        Ok(PREFIXES
            .iter()
            .find(|(prefix, _)| card_id.starts_with(prefix))
            .map_or(Self::ThreeDSecure, |(_, decision)| *decision))
    }

    /// Whether the payment's webhook is ever sent.
    pub fn webhook(self) -> Webhook {
        match self {
            Self::Silent | Self::Lost | Self::LateLost { .. } => Webhook::Never,
            _ => Webhook::Due,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Pending,
    Captured,
    Declined,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Payment,
    Session,
}

/// Where a payment's webhook stands. The payment's status never waits on it: the gateway
/// knows what it took whether or not the point service heard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Webhook {
    /// To be sent once the payment is settled, or sent and not taken yet (a 3-D Secure
    /// button of the same outcome sends it again).
    Due,
    /// Taken by the point service (it answered 2xx).
    Delivered,
    /// Never sent: a `silent`, `lost`, `latelost` or `latedecline` card, the lost webhook on
    /// purpose.
    Never,
}

/// The part of a request both `/v1/payments` and `/v1/payment-sessions` carry.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
pub struct Charge {
    /// The order's correlation id: 1 to 64 letters, digits, `-`, `_` or `:`.
    #[schema(example = "6f1c2a4e-0000-4000-8000-000000000001")]
    pub reference: String,
    /// A positive amount in minor units (halalas).
    #[schema(example = 1500)]
    pub amount_minor: i64,
    /// A three-letter ISO code.
    #[schema(example = "SAR")]
    pub currency: String,
    #[schema(example = 1001)]
    pub customer_id: i64,
}

#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
pub struct CardSource {
    /// `card`.
    #[serde(rename = "type")]
    #[schema(example = "card")]
    pub kind: String,
    /// The saved card; its prefix decides what the sandbox does (`decline`, `fail4xx`,
    /// `fail5xx`, `silent`, `lost`, `latelost<seconds>`, `latedecline<seconds>`, anything
    /// else waits on the 3-D Secure page).
    #[schema(example = "card_visa_4242")]
    pub card_id: String,
    /// 3 or 4 digits. Required like the real service; never stored or logged.
    #[schema(example = "123")]
    pub cvv: String,
}

/// `POST /v1/payments`.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
pub struct PaymentRequest {
    #[serde(flatten)]
    pub charge: Charge,
    pub source: CardSource,
}

/// `POST /v1/payment-sessions`.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
pub struct SessionRequest {
    #[serde(flatten)]
    pub charge: Charge,
    /// Echoed back; defaults to false.
    #[serde(default)]
    pub remember_me: bool,
}

#[derive(Debug, Clone)]
pub struct Payment {
    pub id: String,
    pub kind: Kind,
    pub status: Status,
    pub reference: String,
    pub amount_minor: i64,
    pub currency: String,
    pub customer_id: i64,
    pub webhook: Webhook,
    /// When it was made, then when its status last moved.
    pub updated_at: DateTime<Utc>,
    /// When it was captured; `None` unless it is.
    pub captured_at: Option<DateTime<Utc>>,
}

impl Payment {
    /// A pending payment (or session) made at `now`.
    pub fn new(kind: Kind, charge: Charge, webhook: Webhook, now: DateTime<Utc>) -> Self {
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
            webhook,
            updated_at: now,
            captured_at: None,
        }
    }

    /// Moves a pending payment to `outcome` at `now`; `false` (and nothing changed) when it
    /// was not pending, or `outcome` is pending.
    pub fn settle(&mut self, outcome: Status, now: DateTime<Utc>) -> bool {
        if self.status != Status::Pending || outcome == Status::Pending {
            return false;
        }
        self.status = outcome;
        self.updated_at = now;
        if outcome == Status::Captured {
            self.captured_at = Some(now);
        }
        true
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

#[cfg(test)]
mod tests {
    use super::*;

    fn charge() -> Charge {
        Charge {
            reference: "r".into(),
            amount_minor: 1505,
            currency: "SAR".into(),
            customer_id: 1,
        }
    }

    #[test]
    fn card_ids_choose_the_outcome() {
        let decided = |card: &str| Decision::for_card(card).unwrap();
        assert_eq!(decided("decline-1"), Decision::Decline);
        assert_eq!(decided("fail4xx"), Decision::Fail4xx);
        assert_eq!(decided("fail5xx-x"), Decision::Fail5xx);
        assert_eq!(decided("silent_1"), Decision::Silent);
        assert_eq!(decided("lost-answer"), Decision::Lost);
        assert_eq!(decided("card_visa_4242"), Decision::ThreeDSecure);
        assert_eq!(decided("card_silent"), Decision::ThreeDSecure);
        assert_eq!(Decision::Silent.webhook(), Webhook::Never);
        assert_eq!(Decision::Lost.webhook(), Webhook::Never);
        assert_eq!(Decision::Decline.webhook(), Webhook::Due);
    }

    #[test]
    fn late_card_ids_carry_their_hold_and_outcome() {
        let late = |outcome, seconds| Decision::LateLost {
            outcome,
            hold: Duration::from_secs(seconds),
        };
        assert_eq!(
            Decision::for_card("latelost30-soak"),
            Ok(late(Status::Captured, 30))
        );
        assert_eq!(
            Decision::for_card("latedecline1"),
            Ok(late(Status::Declined, 1))
        );
        assert_eq!(
            Decision::for_card("latelost600x"),
            Ok(late(Status::Captured, 600))
        );
        // `lost` and `decline` are matched by their start only: the late ones are not theirs.
        assert_eq!(Decision::for_card("lostlate30"), Ok(Decision::Lost));
        assert_eq!(Decision::for_card("declinelate30"), Ok(Decision::Decline));
        for bad in [
            "latelost",
            "latelost-30",
            "latelost0",
            "latelost601",
            "latedecline",
            "latelost99999999999999999999999",
        ] {
            assert!(Decision::for_card(bad).is_err(), "{bad}");
        }
        assert_eq!(late(Status::Declined, 5).webhook(), Webhook::Never);
    }

    #[test]
    fn amounts_are_shown_in_major_units() {
        let payment = Payment::new(Kind::Payment, charge(), Webhook::Due, Utc::now());
        assert_eq!(payment.amount_text(), "15.05 SAR");
    }

    #[test]
    fn a_payment_settles_once_and_records_when() {
        let made = Utc::now();
        let mut payment = Payment::new(Kind::Payment, charge(), Webhook::Due, made);
        assert_eq!(payment.updated_at, made);
        let later = made + chrono::Duration::seconds(5);
        assert!(payment.settle(Status::Captured, later));
        assert_eq!(
            (payment.status, payment.updated_at, payment.captured_at),
            (Status::Captured, later, Some(later))
        );
        assert!(!payment.settle(Status::Declined, later + chrono::Duration::seconds(1)));
        assert_eq!(payment.updated_at, later);

        let mut declined = Payment::new(Kind::Session, charge(), Webhook::Due, made);
        assert!(declined.id.starts_with("ses_"));
        assert!(declined.settle(Status::Declined, later));
        assert_eq!(declined.captured_at, None);
    }
}
