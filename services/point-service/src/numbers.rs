//! Decimals in answers and on the way to the payment service. The spec types
//! `point_amount` as a JSON number: it is written as the exact decimal, in plain notation,
//! integral values as integers (`100`, also for a fixture's `100.0`), never through an f64
//! (`domain::decimal`; the answers' types write theirs so, `relayed_routes`). The payment
//! service gets halalas, exactly or not at all.

use bigdecimal::BigDecimal;

pub fn number(value: &BigDecimal) -> serde_json::Value {
    serde_json::Value::Number(domain::decimal::to_number(value))
}

/// An order's SAR amount in halalas (`amount_minor`), exactly: `15.00` → 1500. `None` for an
/// amount that is not a positive whole number of halalas or does not fit an i64; it is never
/// rounded (the loader refuses such a price, and the database holds whole halalas: see
/// `docs/decisions.md`, "Money to the payment service").
pub fn amount_minor(amount: &BigDecimal) -> Option<i64> {
    domain::Money::new(amount.clone())
        .ok()?
        .minor_units()
        .filter(|minor| *minor > 0)
}

#[cfg(test)]
mod tests {
    use std::str::FromStr;

    use super::*;

    fn decimal(text: &str) -> BigDecimal {
        BigDecimal::from_str(text).unwrap()
    }

    #[test]
    fn integers_stay_integers() {
        assert_eq!(number(&decimal("100")).to_string(), "100");
        assert_eq!(number(&decimal("100.000")).to_string(), "100");
        assert_eq!(number(&decimal("12.5")).to_string(), "12.5");
    }

    #[test]
    fn fractions_and_large_values_are_written_exactly() {
        assert_eq!(number(&decimal("9.125")).to_string(), "9.125");
        assert_eq!(number(&decimal("0.1")).to_string(), "0.1");
        assert_eq!(
            number(&decimal("123456789012345678901234.5")).to_string(),
            "123456789012345678901234.5"
        );
        assert_eq!(
            number(&decimal("0.12345678901234567890123")).to_string(),
            "0.12345678901234567890123"
        );
    }

    #[test]
    fn amount_minor_is_exact_halalas_or_nothing() {
        assert_eq!(amount_minor(&decimal("15.00")), Some(1500));
        assert_eq!(amount_minor(&decimal("15")), Some(1500));
        assert_eq!(amount_minor(&decimal("0.07")), Some(7));
        // 1.15 * 100 through an f64 is 114.99999999999999.
        assert_eq!(amount_minor(&decimal("1.15")), Some(115));
        assert_eq!(
            amount_minor(&decimal("92233720368547758.07")),
            Some(i64::MAX)
        );
        for refused in ["9.125", "0", "0.001", "-15.00", "92233720368547758.08"] {
            assert_eq!(amount_minor(&decimal(refused)), None, "{refused}");
        }
    }
}
