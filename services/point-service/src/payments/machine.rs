//! A card-paid order's payment as a state machine (no database, no HTTP in here). The
//! database code loads an order's [`Payment`] under `SELECT … FOR UPDATE`, asks
//! [`Payment::step`] what an input means and applies that [`Decision`]; the next state it
//! also returns is for the property tests, which run the machine alone.
//!
//! The rules (docs/design.md, "Payment service"):
//! - A pay call may start only on an open order (`initial_order`); it is recorded as an
//!   attempt before the payment service is asked, then with the answer.
//! - A capture that matches the order's amount and currency makes an open order
//!   successful and credits it, whatever attempt it names. Any other capture took money
//!   without points: it is listed for refund ([`Decision::Unapplied`]), once per payment.
//! - A decline fails an open order unless the attempt it names is older than another attempt
//!   that still counts (answered, or lost: its payment may exist): the client is still
//!   paying and the newer attempt decides. A decline naming no attempt, or an order with
//!   none, fails the order.
//! - Webhooks race the pay route: the payment service answers the pay call and sends the
//!   webhook at once, so an event may name a payment whose attempt is still in flight. A
//!   capture needs no attempt and applies. A decline that depends on an attempt still in
//!   flight is not decided: [`Decision::RetryLater`] (503, nothing recorded) makes the
//!   sender deliver it again once the answer is recorded. Failing at once could take the
//!   money of the newer attempt without points; recording it and deciding nothing could
//!   leave an order payable after a real decline.
//! - A decline naming an id no attempt was answered with waits while any attempt is in
//!   flight (the id may be its payment), then is put on the oldest lost attempt (its payment
//!   may be this one); only when there is none does it name nothing. Putting it on the
//!   oldest is the choice that never fails an order whose newer payment may still be
//!   captured; the price is that with two lost attempts a real decline of the newer leaves
//!   the order open (payable) instead of failed.

/// Where the order stands (its `point_orders.status`).
pub use crate::orders::Status;

/// One pay call of the order, as far as we know it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Attempt {
    /// The payment service was asked and its answer is not recorded yet.
    InFlight,
    /// It answered with this payment (or session) id.
    Answered(String),
    /// It answered 4xx, or the call never reached it (`unsent`): no payment was made.
    /// Counts for nothing.
    Refused,
    /// No usable answer (timeout, transport failure, 5xx, no id), or the pay route stopped
    /// before recording it: a payment may exist whose id we never learned.
    Lost,
}

impl Attempt {
    /// Answered or lost: a payment that may decide the order exists or may exist.
    fn counts(&self) -> bool {
        matches!(self, Self::Answered(_) | Self::Lost)
    }
}

/// An order's payment: what the machine decides from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Payment {
    pub status: Status,
    /// Oldest first.
    pub attempts: Vec<Attempt>,
    /// Payment ids whose capture was already decided (credited or listed for refund).
    pub captured: Vec<String>,
}

/// How a capture's money compares with the order's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Amount {
    Matches,
    OtherAmount,
    OtherCurrency,
}

/// What happened to the order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input<'a> {
    /// A pay route is about to ask the payment service.
    PayStart,
    /// The payment service answered attempt `n` (its index) with a payment id.
    PayAnswered {
        attempt: usize,
        payment_id: &'a str,
    },
    /// It refused attempt `n` (4xx).
    PayRefused {
        attempt: usize,
    },
    /// Attempt `n` got no usable answer, or stayed in flight past the pay call's longest
    /// possible wait (the pay route stopped).
    PayLost {
        attempt: usize,
    },
    Captured {
        payment_id: Option<&'a str>,
        amount: Amount,
    },
    Declined {
        payment_id: Option<&'a str>,
    },
}

/// Why a capture took money without giving points.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unapplied {
    AlreadySuccessful,
    PaymentFailed,
    /// A legacy `paid` copy.
    NotPayable,
    UnknownOrder,
    AmountMismatch,
    CurrencyMismatch,
    /// Never the machine's decision: the webhook's, for a correctly signed event whose body
    /// it could not read but that may be a capture.
    Unreadable,
    /// Never the machine's decision: the webhook's, for a capture naming this order whose
    /// payment another order's pay call was answered with (a gateway that mixed up the
    /// reference): crediting it would give this order the other payer's money.
    OtherOrder,
}

impl Unapplied {
    /// Every reason, for the counter exported at zero (`webhook::export_counters`).
    pub const ALL: [Unapplied; 8] = [
        Self::AlreadySuccessful,
        Self::PaymentFailed,
        Self::NotPayable,
        Self::UnknownOrder,
        Self::AmountMismatch,
        Self::CurrencyMismatch,
        Self::Unreadable,
        Self::OtherOrder,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::AlreadySuccessful => "already_successful",
            Self::PaymentFailed => "payment_failed",
            Self::NotPayable => "not_payable",
            Self::UnknownOrder => "unknown_order",
            Self::AmountMismatch => "amount_mismatch",
            Self::CurrencyMismatch => "currency_mismatch",
            Self::Unreadable => "unreadable",
            Self::OtherOrder => "other_order",
        }
    }
}

/// What the database code does about an input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Record a new attempt and ask the payment service.
    Pay,
    /// The order is final: the pay route answers 409 and asks nobody.
    NotPayable(Status),
    /// Record the attempt's answer; the order does not move (the pay routes never move it).
    Record,
    /// Make the order successful and credit its points, once.
    Credit,
    /// Make the order `payment_failed`.
    Fail,
    /// A decline of an attempt a newer one supersedes: recorded; the order stays open.
    Superseded,
    /// A decline that depends on an attempt still in flight: record nothing, answer 503 so
    /// that the sender delivers it again.
    RetryLater,
    /// A decline of a final order: recorded; nothing moves.
    NotPending,
    /// A capture of a payment already decided (another event id for the same payment): no
    /// second charge; recorded, nothing moves.
    DuplicateCapture,
    /// Money taken without points: record, list for refund, alert.
    Unapplied(Unapplied),
}

impl Payment {
    /// The decision on `input` and the state after it.
    pub fn step(mut self, input: &Input<'_>) -> (Self, Decision) {
        let decision = match *input {
            Input::PayStart => {
                if self.status == Status::Open {
                    self.attempts.push(Attempt::InFlight);
                    Decision::Pay
                } else {
                    Decision::NotPayable(self.status)
                }
            }
            Input::PayAnswered {
                attempt,
                payment_id,
            } => self.settle(attempt, Attempt::Answered(payment_id.to_owned())),
            Input::PayRefused { attempt } => self.settle(attempt, Attempt::Refused),
            Input::PayLost { attempt } => {
                if self.attempts.get(attempt) == Some(&Attempt::InFlight) {
                    self.attempts[attempt] = Attempt::Lost;
                }
                Decision::Record
            }
            Input::Captured { payment_id, amount } => self.capture(payment_id, amount),
            Input::Declined { payment_id } => self.decline(payment_id),
        };
        (self, decision)
    }

    /// A pay answer replaces what we knew of the attempt (a lost one may still be answered
    /// late); the order never moves here.
    fn settle(&mut self, attempt: usize, now: Attempt) -> Decision {
        if let Some(slot) = self.attempts.get_mut(attempt) {
            *slot = now;
        }
        Decision::Record
    }

    fn capture(&mut self, payment_id: Option<&str>, amount: Amount) -> Decision {
        if let Some(id) = payment_id {
            if self.captured.iter().any(|c| c == id) {
                return Decision::DuplicateCapture;
            }
            self.captured.push(id.to_owned());
        }
        match (self.status, amount) {
            (Status::Successful, _) => Decision::Unapplied(Unapplied::AlreadySuccessful),
            (Status::PaymentFailed, _) => Decision::Unapplied(Unapplied::PaymentFailed),
            (Status::LegacyPaid, _) => Decision::Unapplied(Unapplied::NotPayable),
            (Status::Open, Amount::OtherAmount) => Decision::Unapplied(Unapplied::AmountMismatch),
            (Status::Open, Amount::OtherCurrency) => {
                Decision::Unapplied(Unapplied::CurrencyMismatch)
            }
            (Status::Open, Amount::Matches) => {
                self.status = Status::Successful;
                Decision::Credit
            }
        }
    }

    fn decline(&mut self, payment_id: Option<&str>) -> Decision {
        if self.status != Status::Open {
            return Decision::NotPending;
        }
        let answered = payment_id.and_then(|id| {
            self.attempts
                .iter()
                .position(|a| matches!(a, Attempt::Answered(p) if p == id))
        });
        let named = match answered {
            Some(n) => Some(n),
            // An id no answer gave: it may be the payment of an attempt still in flight
            // (wait for its answer), else it is put on the oldest lost attempt.
            None if self.attempts.contains(&Attempt::InFlight) => {
                return Decision::RetryLater;
            }
            None => self.attempts.iter().position(|a| *a == Attempt::Lost),
        };
        let newer = match named {
            Some(n) => &self.attempts[n + 1..],
            None => &self.attempts[..],
        };
        if named.is_some() && newer.iter().any(Attempt::counts) {
            return Decision::Superseded;
        }
        if newer.contains(&Attempt::InFlight) {
            return Decision::RetryLater;
        }
        self.status = Status::PaymentFailed;
        Decision::Fail
    }
}

#[cfg(test)]
mod tests;
