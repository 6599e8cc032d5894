//! A day's settlement in pages: the payments captured that UTC day, by capture time then id,
//! and an opaque cursor naming the last one a page held. A page after a cursor holds what
//! comes strictly after it, so a capture made while a client pages (always later than what
//! it has read) comes on a later page, never twice and never instead of another.

use chrono::{DateTime, NaiveDate, Utc};

use crate::payments::Payment;

/// Why a settlement cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unreadable {
    #[error("the settlement date must be a day written YYYY-MM-DD, got {0:?}")]
    Date(String),
    #[error("the cursor is not one this sandbox gave for this day")]
    Cursor,
}

/// `2026-03-01`, strictly: four, two and two digits.
pub fn parse_day(raw: &str) -> Result<NaiveDate, Unreadable> {
    let shape = raw.len() == 10
        && raw.bytes().enumerate().all(|(i, b)| match i {
            4 | 7 => b == b'-',
            _ => b.is_ascii_digit(),
        });
    shape
        .then(|| NaiveDate::parse_from_str(raw, "%Y-%m-%d").ok())
        .flatten()
        .ok_or_else(|| Unreadable::Date(raw.to_owned()))
}

/// Where a page ended: the last capture it held.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cursor {
    captured_at: DateTime<Utc>,
    id: String,
}

impl Cursor {
    fn after(payment: &Payment) -> Option<Self> {
        Some(Self {
            captured_at: payment.captured_at?,
            id: payment.id.clone(),
        })
    }

    /// The cursor as clients see it: hex, so that nobody reads meaning into it.
    pub fn encode(&self) -> String {
        let nanos = self.captured_at.timestamp_nanos_opt().unwrap_or(i64::MAX);
        hex::encode(format!("{nanos}:{}", self.id))
    }

    /// A cursor this sandbox gave for `day`.
    pub fn decode(raw: &str, day: NaiveDate) -> Result<Self, Unreadable> {
        let text = hex::decode(raw)
            .ok()
            .and_then(|bytes| String::from_utf8(bytes).ok())
            .ok_or(Unreadable::Cursor)?;
        let (nanos, id) = text.split_once(':').ok_or(Unreadable::Cursor)?;
        let captured_at = nanos
            .parse::<i64>()
            .ok()
            .map(DateTime::from_timestamp_nanos)
            .filter(|at| at.date_naive() == day)
            .ok_or(Unreadable::Cursor)?;
        if id.is_empty() {
            return Err(Unreadable::Cursor);
        }
        Ok(Self {
            captured_at,
            id: id.to_owned(),
        })
    }

    fn is_before(&self, payment: &Payment) -> bool {
        payment
            .captured_at
            .is_some_and(|at| (at, payment.id.as_str()) > (self.captured_at, self.id.as_str()))
    }
}

/// One page of a day's captures and the cursor of the next page, if there is one.
#[derive(Debug)]
pub struct Page {
    pub payments: Vec<Payment>,
    pub next: Option<Cursor>,
}

/// The page of `size` after `cursor` (from the start without one) of `captured`, a day's
/// captures in their order (`Store::captured_on`).
pub fn page(captured: Vec<Payment>, cursor: Option<&Cursor>, size: usize) -> Page {
    let mut rest = captured
        .into_iter()
        .filter(|p| cursor.is_none_or(|c| c.is_before(p)));
    let payments: Vec<Payment> = rest.by_ref().take(size).collect();
    let next = match rest.next() {
        Some(_) => payments.last().and_then(Cursor::after),
        None => None,
    };
    Page { payments, next }
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;
    use crate::payments::{Charge, Kind, Status, Webhook};

    fn day() -> NaiveDate {
        NaiveDate::from_ymd_opt(2026, 3, 1).unwrap()
    }

    fn captured(n: usize) -> Vec<Payment> {
        (0..n)
            .map(|i| {
                let charge = Charge {
                    reference: format!("r{i}"),
                    amount_minor: 100,
                    currency: "SAR".into(),
                    customer_id: 1,
                };
                let at = Utc.with_ymd_and_hms(2026, 3, 1, 12, 0, 0).unwrap()
                    + chrono::Duration::nanoseconds(i as i64);
                let mut p = Payment::new(Kind::Payment, charge, Webhook::Due, at);
                p.settle(Status::Captured, at);
                p
            })
            .collect()
    }

    #[test]
    fn pages_hold_every_capture_once_and_the_last_has_no_next() {
        for (n, size) in [(0, 2), (1, 2), (4, 2), (5, 2), (5, 100)] {
            let all = captured(n);
            let mut seen = Vec::new();
            let mut cursor: Option<Cursor> = None;
            loop {
                let page = page(all.clone(), cursor.as_ref(), size);
                assert!(page.payments.len() <= size);
                seen.extend(page.payments.iter().map(|p| p.id.clone()));
                match page.next {
                    Some(next) => {
                        let again = Cursor::decode(&next.encode(), day()).unwrap();
                        assert_eq!(again, next);
                        cursor = Some(again);
                    }
                    None => break,
                }
            }
            let ids: Vec<String> = all.iter().map(|p| p.id.clone()).collect();
            assert_eq!(seen, ids, "{n} in pages of {size}");
        }
    }

    #[test]
    fn dates_and_cursors_are_read_strictly() {
        assert_eq!(parse_day("2026-03-01"), Ok(day()));
        for bad in [
            "2026-3-1",
            "2026-02-30",
            "20260301",
            "2026-03-01T00",
            "",
            "２026-03-01",
        ] {
            assert_eq!(
                parse_day(bad),
                Err(Unreadable::Date(bad.to_owned())),
                "{bad}"
            );
        }
        let cursor = Cursor::after(&captured(1)[0]).unwrap().encode();
        assert!(Cursor::decode(&cursor, day()).is_ok());
        let next_day = day().succ_opt().unwrap();
        for (bad, on) in [
            (cursor.as_str(), next_day),
            ("zz", day()),
            ("", day()),
            (&hex::encode("12"), day()),
            (&hex::encode("x:pay_1"), day()),
            (
                &hex::encode(format!("{}:", 1_772_366_400_000_000_000_i64)),
                day(),
            ),
        ] {
            assert_eq!(Cursor::decode(bad, on), Err(Unreadable::Cursor), "{bad}");
        }
    }
}
