//! The settlement check's rule (no HTTP, no SQL in here): a day's settlement against the card
//! credits of the ledger, and the report's lines.

use std::collections::{HashMap, HashSet};

use bigdecimal::BigDecimal;
use chrono::{DateTime, NaiveDate, SecondsFormat, Utc};

use crate::payments::client::Settled;

/// A card credit: a `payment_captured` event whose outcome is `captured` (from the webhook or
/// the payment sync, alike).
#[derive(Debug, Clone, PartialEq, Eq, diesel::Queryable)]
pub struct Credit {
    pub event_id: String,
    pub reference: String,
    pub payment_id: Option<String>,
    pub amount_minor: Option<i64>,
    pub currency: Option<String>,
    pub received_at: DateTime<Utc>,
}

/// What the ledger holds for the day, read after the settlement.
#[derive(Debug, Default)]
pub struct Ledger {
    /// The credits of the payments in the day's settlement and of those credited that day
    /// (each payment's every credit, whenever applied), and every credit applied that day,
    /// oldest first.
    pub credits: Vec<Credit>,
    /// The payments of the day's settlement listed for refund (`unapplied_captures`),
    /// resolved or not.
    pub listed: HashSet<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// In the settlement, neither credited nor listed for refund.
    CaptureNotCredited,
    /// Credited that day, in neither that day's settlement nor the day before's (or the
    /// credit names no payment).
    CreditWithoutCapture,
    AmountMismatch,
    CurrencyMismatch,
    /// Credited to another order than the one the settlement's capture names: the points
    /// went to someone who did not pay for them.
    ReferenceMismatch,
    /// One payment credited more than once (in the day's settlement, or credited that day).
    /// The webhook and the sync decide a payment once, so this is a bug or a hand-made row.
    CreditedTwice,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::CaptureNotCredited => "capture_not_credited",
            Kind::CreditWithoutCapture => "credit_without_capture",
            Kind::AmountMismatch => "amount_mismatch",
            Kind::CurrencyMismatch => "currency_mismatch",
            Kind::ReferenceMismatch => "reference_mismatch",
            Kind::CreditedTwice => "credited_twice",
        }
    }
}

/// One difference: the report's line, tab-separated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Difference {
    pub kind: Kind,
    pub payment_id: Option<String>,
    pub reference: String,
    /// What the settlement says.
    pub settlement: String,
    /// What the ledger says.
    pub ledger: String,
}

impl Difference {
    /// `kind  payment_id  order  settlement  ledger`.
    pub fn line(&self) -> String {
        format!(
            "{}\t{}\t{}\t{}\t{}",
            self.kind.as_str(),
            self.payment_id.as_deref().unwrap_or("-"),
            self.reference,
            self.settlement,
            self.ledger
        )
    }
}

/// What a comparison found, and what it looked at.
#[derive(Debug, Default)]
pub struct Report {
    pub differences: Vec<Difference>,
    /// Payments in the day's settlement.
    pub captures: usize,
    /// Of them, the ones not credited but listed for refund.
    pub listed: usize,
    /// Card credits applied that day.
    pub credits: usize,
}

impl Report {
    /// The line the report ends with.
    pub fn summary(&self, day: NaiveDate) -> String {
        let outcome = match self.differences.len() {
            0 => "agrees".to_owned(),
            1 => "1 difference".to_owned(),
            n => format!("{n} differences"),
        };
        format!(
            "settlement {day}: {outcome} (captures: {}, of them listed for refund: {}; card \
             credits applied that day: {})",
            self.captures, self.listed, self.credits
        )
    }
}

/// The UTC instants `[start, end)` of `day`.
pub fn bounds(day: NaiveDate) -> (DateTime<Utc>, DateTime<Utc>) {
    let start = day.and_time(chrono::NaiveTime::MIN).and_utc();
    (start, start + chrono::Days::new(1))
}

/// Compares `day`'s settlement (`settled`) and the day before's (`before`) with `ledger`:
/// the captures in the settlement's order, then the day's credits in theirs, then the
/// payments credited twice in the order of their first credit.
pub fn compare(day: NaiveDate, settled: &[Settled], before: &[Settled], ledger: &Ledger) -> Report {
    let (start, end) = bounds(day);
    let that_day = |credit: &Credit| credit.received_at >= start && credit.received_at < end;
    // Each payment's credits, oldest first: a capture is compared with the first.
    let mut credited: HashMap<&str, Vec<&Credit>> = HashMap::new();
    for credit in &ledger.credits {
        if let Some(payment) = credit.payment_id.as_deref() {
            credited.entry(payment).or_default().push(credit);
        }
    }
    let mut report = Report::default();
    let mut seen: HashSet<&str> = HashSet::new();
    for capture in settled {
        if !seen.insert(&capture.id) {
            continue;
        }
        report.captures += 1;
        match credited.get(capture.id.as_str()) {
            Some(credits) => agree(&mut report.differences, capture, credits[0]),
            None if ledger.listed.contains(&capture.id) => report.listed += 1,
            None => report.differences.push(Difference {
                kind: Kind::CaptureNotCredited,
                payment_id: Some(capture.id.clone()),
                reference: capture.reference.clone(),
                settlement: captured(capture),
                ledger: "not credited, not listed for refund".to_owned(),
            }),
        }
    }
    let before: HashMap<&str, &Settled> = before.iter().map(|s| (s.id.as_str(), s)).collect();
    for credit in ledger.credits.iter().filter(|c| that_day(c)) {
        report.credits += 1;
        let payment = credit.payment_id.as_deref();
        if payment.is_some_and(|p| seen.contains(p)) {
            continue; // compared with the day's capture above
        }
        match payment.and_then(|p| before.get(p)) {
            Some(capture) => agree(&mut report.differences, capture, credit),
            None => report.differences.push(Difference {
                kind: Kind::CreditWithoutCapture,
                payment_id: credit.payment_id.clone(),
                reference: credit.reference.clone(),
                settlement: match payment {
                    Some(_) => not_settled(day),
                    None => "the credit names no payment".to_owned(),
                },
                ledger: credited_line(credit),
            }),
        }
    }
    // Defence in depth: a payment credited more than once, one line however many credits,
    // from the run of each day it bears on.
    let mut reported: HashSet<&str> = HashSet::new();
    for payment in ledger
        .credits
        .iter()
        .filter_map(|c| c.payment_id.as_deref())
    {
        let credits = &credited[payment];
        let bears_on_day = seen.contains(payment) || credits.iter().any(|c| that_day(c));
        if credits.len() > 1 && bears_on_day && reported.insert(payment) {
            let capture = settled
                .iter()
                .find(|s| s.id == payment)
                .or(before.get(payment).copied());
            report
                .differences
                .push(twice(day, payment, capture, credits));
        }
    }
    report
}

/// The line of a payment credited more than once: every credit, and the order each went to
/// when they went to several.
fn twice(
    day: NaiveDate,
    payment: &str,
    capture: Option<&Settled>,
    credits: &[&Credit],
) -> Difference {
    let mut orders: Vec<&str> = Vec::new();
    for credit in credits {
        if !orders.contains(&credit.reference.as_str()) {
            orders.push(&credit.reference);
        }
    }
    let ledger: Vec<String> = credits
        .iter()
        .map(|credit| match orders.len() {
            1 => credited_line(credit),
            _ => format!("{} to order {}", credited_line(credit), credit.reference),
        })
        .collect();
    Difference {
        kind: Kind::CreditedTwice,
        payment_id: Some(payment.to_owned()),
        reference: orders.join(", "),
        settlement: capture.map_or_else(|| not_settled(day), captured),
        ledger: ledger.join("; "),
    }
}

fn not_settled(day: NaiveDate) -> String {
    format!(
        "not in the settlements of {} and {day}",
        day.pred_opt().unwrap_or(day)
    )
}

/// The amount and currency checks of a capture and its credit.
fn agree(differences: &mut Vec<Difference>, capture: &Settled, credit: &Credit) {
    let checks = [
        (
            Kind::AmountMismatch,
            credit.amount_minor != Some(capture.amount_minor),
        ),
        (
            Kind::CurrencyMismatch,
            credit.currency.as_deref() != Some(capture.currency.as_str()),
        ),
        (
            Kind::ReferenceMismatch,
            credit.reference
                != crate::payments::webhook::event::canonical_reference(&capture.reference),
        ),
    ];
    for (kind, differs) in checks {
        if differs {
            let mut ledger = credited_line(credit);
            if kind == Kind::ReferenceMismatch {
                ledger.push_str(&format!(" to order {}", credit.reference));
            }
            differences.push(Difference {
                kind,
                payment_id: Some(capture.id.clone()),
                reference: capture.reference.clone(),
                settlement: captured(capture),
                ledger,
            });
        }
    }
}

fn captured(capture: &Settled) -> String {
    format!(
        "captured {} at {}",
        amount(Some(capture.amount_minor), Some(&capture.currency)),
        time(&capture.captured_at)
    )
}

fn credited_line(credit: &Credit) -> String {
    format!(
        "credited {} at {} (event {})",
        amount(credit.amount_minor, credit.currency.as_deref()),
        time(&credit.received_at),
        credit.event_id
    )
}

/// `15.00 SAR` from 1500 halalas; `-` for what is unknown.
fn amount(minor: Option<i64>, currency: Option<&str>) -> String {
    let amount = minor.map_or("-".to_owned(), |m| BigDecimal::new(m.into(), 2).to_string());
    format!("{amount} {}", currency.unwrap_or("-"))
}

fn time(at: &DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Secs, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DAY: &str = "2026-11-10";

    fn at(time: &str) -> DateTime<Utc> {
        time.parse().unwrap()
    }

    fn capture(id: &str, order: &str, time: &str) -> Settled {
        Settled {
            id: id.to_owned(),
            reference: order.to_owned(),
            amount_minor: 1500,
            currency: "SAR".to_owned(),
            captured_at: at(time),
        }
    }

    fn credit(event: &str, order: &str, payment: &str, time: &str) -> Credit {
        Credit {
            event_id: event.to_owned(),
            reference: order.to_owned(),
            payment_id: Some(payment.to_owned()),
            amount_minor: Some(1500),
            currency: Some("SAR".to_owned()),
            received_at: at(time),
        }
    }

    fn lines(settled: &[Settled], before: &[Settled], credits: Vec<Credit>) -> Vec<String> {
        let ledger = Ledger {
            credits,
            listed: HashSet::new(),
        };
        let report = compare(DAY.parse().unwrap(), settled, before, &ledger);
        report.differences.iter().map(Difference::line).collect()
    }

    #[test]
    fn a_payment_of_the_settlement_credited_twice_is_one_line() {
        let settled = [capture("pay_1", "order-a", "2026-11-10T08:59:59Z")];
        let credits = vec![
            credit("evt_1", "order-a", "pay_1", "2026-11-10T09:00:00Z"),
            // Another day's credit of the same payment (the reading fetches every one).
            credit("evt_2", "order-a", "pay_1", "2026-11-12T10:00:00Z"),
        ];
        assert_eq!(
            lines(&settled, &[], credits),
            [
                "credited_twice\tpay_1\torder-a\tcaptured 15.00 SAR at 2026-11-10T08:59:59Z\t\
              credited 15.00 SAR at 2026-11-10T09:00:00Z (event evt_1); \
              credited 15.00 SAR at 2026-11-12T10:00:00Z (event evt_2)"
            ]
        );
    }

    #[test]
    fn a_payment_credited_that_day_and_before_to_two_orders_is_one_line() {
        let before = [capture("pay_1", "order-a", "2026-11-09T23:59:00Z")];
        let credits = vec![
            credit("evt_1", "order-a", "pay_1", "2026-11-09T23:59:30Z"),
            credit("evt_2", "order-b", "pay_1", "2026-11-10T10:00:00Z"),
            // Credited twice, but neither in the day's settlement nor applied that day.
            credit("evt_3", "order-c", "pay_3", "2026-11-08T10:00:00Z"),
            credit("evt_4", "order-c", "pay_3", "2026-11-09T10:00:00Z"),
        ];
        assert_eq!(
            lines(&[], &before, credits),
            [
                // The day's credit is compared with the day before's capture, as before.
                "reference_mismatch\tpay_1\torder-a\tcaptured 15.00 SAR at 2026-11-09T23:59:00Z\t\
                 credited 15.00 SAR at 2026-11-10T10:00:00Z (event evt_2) to order order-b",
                "credited_twice\tpay_1\torder-a, order-b\tcaptured 15.00 SAR at 2026-11-09T23:59:00Z\t\
                 credited 15.00 SAR at 2026-11-09T23:59:30Z (event evt_1) to order order-a; \
                 credited 15.00 SAR at 2026-11-10T10:00:00Z (event evt_2) to order order-b",
            ]
        );
    }
}
