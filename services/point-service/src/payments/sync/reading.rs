//! What one pass read of an order's payments ([`Reading`]), and whether the reads agree: a
//! payment read twice, differently (by id and by reference, or this pass and an earlier
//! one's final reading), is a [`Dispute`], and while there is one nothing of the order is
//! applied (docs/design.md, "Payment service"). No I/O in here.

use std::fmt;

use crate::payments::client::{ReadPayment, ReadStatus};

/// Which read a payment came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    ById,
    ByReference,
    /// An earlier pass of the sync ([`super::earlier`]).
    EarlierPass,
}

impl Via {
    fn as_str(self) -> &'static str {
        match self {
            Via::ById => "by id",
            Via::ByReference => "by reference",
            Via::EarlierPass => "on an earlier pass",
        }
    }
}

/// A payment as one read found it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Read {
    pub payment: ReadPayment,
    pub via: Via,
}

impl Read {
    /// Whether `other` says something else of the same payment: its status, amount or
    /// currency.
    fn disagrees(&self, other: &ReadPayment) -> bool {
        let (a, b) = (&self.payment, other);
        a.status != b.status || a.amount_minor != b.amount_minor || a.currency != b.currency
    }
}

impl fmt::Display for Read {
    /// `captured 15.00 SAR (by id)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let status = match self.payment.status {
            ReadStatus::Pending => "pending",
            ReadStatus::Captured => "captured",
            ReadStatus::Declined => "declined",
            ReadStatus::Other => "in a status of another name",
        };
        let p = &self.payment;
        let amount = bigdecimal::BigDecimal::new(p.amount_minor.into(), 2);
        write!(
            f,
            "{status} {amount} {} ({})",
            p.currency,
            self.via.as_str()
        )
    }
}

/// Two reads of one payment that disagree: nothing is applied from either.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dispute {
    pub earlier: Read,
    pub later: Read,
}

impl fmt::Display for Dispute {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "payment {} read back differently: {}, then {}",
            self.later.payment.id, self.earlier, self.later
        )
    }
}

/// What the payment service said of an order's payments.
#[derive(Debug, Default)]
pub struct Reading {
    /// Payments that belong to the order, each once, every read of it alike.
    pub payments: Vec<Read>,
    /// Payments read twice, differently: while there is one, nothing of the order is
    /// applied.
    pub disputed: Vec<Dispute>,
    /// Something is not known yet: a read failed, an id is unknown to the payment service,
    /// an answer contradicted the question. Why, for the order's `last_error`.
    pub unsure: Option<String>,
}

impl Reading {
    pub(super) fn unsure(&mut self, why: String) {
        self.unsure.get_or_insert(why);
    }

    /// Adds a payment read once more (by id and by reference) once; two reads of one
    /// payment that disagree put it among the disputed.
    pub fn add(&mut self, read: Read) {
        let id = &read.payment.id;
        if self.disputed.iter().any(|d| d.later.payment.id == *id) {
            return;
        }
        match self.payments.iter().position(|seen| seen.payment.id == *id) {
            None => self.payments.push(read),
            Some(at) if !self.payments[at].disagrees(&read.payment) => {}
            Some(at) => {
                let earlier = self.payments.remove(at);
                self.disputed.push(Dispute {
                    earlier,
                    later: read,
                });
            }
        }
    }

    /// Puts a payment that an earlier pass read in a final state, and this one reads
    /// otherwise, among the disputed. A status this contract does not name after a final
    /// one (refunded, voided) is where a payment goes next, not a disagreement.
    pub fn against_earlier(&mut self, earlier: &[ReadPayment]) {
        for before in earlier {
            let Some(at) = self.payments.iter().position(|r| r.payment.id == before.id) else {
                continue;
            };
            if self.payments[at].payment.status == ReadStatus::Other {
                continue;
            }
            let before = Read {
                payment: before.clone(),
                via: Via::EarlierPass,
            };
            if before.disagrees(&self.payments[at].payment) {
                let later = self.payments.remove(at);
                self.disputed.push(Dispute {
                    earlier: before,
                    later,
                });
            }
        }
    }

    /// Takes the payments `ids` out of the reading (neither applied nor counted), with why.
    pub fn set_aside(&mut self, ids: &[String], why: &str) {
        if ids.is_empty() {
            return;
        }
        self.payments.retain(|r| !ids.contains(&r.payment.id));
        self.disputed.retain(|d| !ids.contains(&d.later.payment.id));
        self.unsure(format!("payment {} {why}", ids.join(", ")));
    }

    /// Every payment read, each once: the agreed ones and the later reading of each disputed
    /// one.
    pub fn reads(&self) -> impl Iterator<Item = &Read> {
        self.payments
            .iter()
            .chain(self.disputed.iter().map(|d| &d.later))
    }

    /// The payments to apply, when nothing is disputed.
    pub fn agreed(&self) -> impl Iterator<Item = &ReadPayment> {
        let agreed = if self.disputed.is_empty() {
            &self.payments[..]
        } else {
            &[]
        };
        agreed.iter().map(|read| &read.payment)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(status: ReadStatus, amount_minor: i64, via: Via) -> Read {
        Read {
            payment: ReadPayment {
                id: "pay_1".into(),
                reference: "r".into(),
                status,
                amount_minor,
                currency: "SAR".into(),
            },
            via,
        }
    }

    #[test]
    fn a_payment_read_twice_alike_counts_once_and_differently_decides_nothing() {
        let mut reading = Reading::default();
        reading.add(read(ReadStatus::Captured, 1500, Via::ById));
        reading.add(read(ReadStatus::Captured, 1500, Via::ByReference));
        assert_eq!((reading.payments.len(), reading.disputed.len()), (1, 0));
        assert_eq!(reading.agreed().count(), 1);
        reading.add(read(ReadStatus::Declined, 1500, Via::ByReference));
        assert_eq!((reading.payments.len(), reading.disputed.len()), (0, 1));
        assert_eq!(reading.agreed().count(), 0, "neither reading is applied");
        assert_eq!(
            reading.disputed[0].to_string(),
            "payment pay_1 read back differently: captured 15.00 SAR (by id), then declined 15.00 SAR (by reference)"
        );
        // A third read of it, even agreeing with one of the two, settles nothing.
        reading.add(read(ReadStatus::Captured, 1500, Via::ByReference));
        assert_eq!((reading.payments.len(), reading.disputed.len()), (0, 1));
    }

    #[test]
    fn another_amount_is_a_dispute_too() {
        let mut reading = Reading::default();
        reading.add(read(ReadStatus::Captured, 1500, Via::ById));
        reading.add(read(ReadStatus::Captured, 1400, Via::ByReference));
        assert_eq!(reading.disputed.len(), 1);
    }

    #[test]
    fn a_final_reading_of_an_earlier_pass_that_this_one_contradicts_decides_nothing() {
        let earlier = [read(ReadStatus::Declined, 1500, Via::ById).payment];
        let mut agreeing = Reading::default();
        agreeing.add(read(ReadStatus::Declined, 1500, Via::ById));
        agreeing.against_earlier(&earlier);
        assert_eq!(agreeing.agreed().count(), 1);

        let mut flipped = Reading::default();
        flipped.add(read(ReadStatus::Captured, 1500, Via::ById));
        flipped.against_earlier(&earlier);
        assert_eq!(flipped.agreed().count(), 0);
        let mut refunded = Reading::default();
        refunded.add(read(ReadStatus::Other, 1500, Via::ById));
        refunded.against_earlier(&earlier);
        assert_eq!(
            refunded.disputed.len(),
            0,
            "refunded after declined: moved on"
        );
        assert_eq!(
            flipped.disputed[0].to_string(),
            "payment pay_1 read back differently: declined 15.00 SAR (on an earlier pass), then \
             captured 15.00 SAR (by id)"
        );
    }
}
