//! Reading a body's values exactly: decimals from JSON text or numbers, never through a
//! double.

use bigdecimal::{BigDecimal, Zero};
use domain::{Money, Points};
use serde_json::Value;

/// The refusal of a body that is no JSON object, on every back-office route with a body.
pub const NOT_AN_OBJECT: &str = "the body must be a JSON object";

/// A decimal sent as plain text (`"12.345"`) or as a JSON number (`12.345`, read as the
/// decimal it writes).
fn decimal(value: &Value) -> Option<BigDecimal> {
    match value {
        Value::String(text) => text.parse::<Points>().ok().map(Points::into_decimal),
        Value::Number(number) => domain::decimal::from_number(number).ok(),
        _ => None,
    }
}

/// A positive number of points.
pub fn positive_points(value: &Value) -> Option<BigDecimal> {
    decimal(value).filter(|points| *points > BigDecimal::zero())
}

/// A signed number of points other than 0.
pub fn nonzero_points(value: &Value) -> Option<BigDecimal> {
    decimal(value).filter(|points| !points.is_zero())
}

/// Text of 1 to `max` characters once trimmed, as trimmed.
pub fn text(value: &Value, max: usize) -> Option<String> {
    value
        .as_str()
        .map(str::trim)
        .filter(|text| !text.is_empty() && text.chars().count() <= max)
        .map(str::to_owned)
}

/// The largest price `point_offers.amount` (`NUMERIC(12, 2)`) holds.
fn max_amount() -> BigDecimal {
    BigDecimal::new(999_999_999_999_i64.into(), 2)
}

/// An amount of SAR: at least 0, at most two decimals (never rounded), at most
/// 9999999999.99; written with its two decimals.
pub fn amount(value: &Value) -> Option<Money> {
    decimal(value)
        .and_then(|amount| Money::new(amount).ok())
        .filter(|amount| *amount.as_decimal() <= max_amount())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn points_are_positive_exact_decimals_from_text_or_numbers() {
        let text = |v: Value| positive_points(&v).map(|p| p.normalized().to_plain_string());
        assert_eq!(text(json!("12.345")), Some("12.345".to_owned()));
        assert_eq!(text(json!(12.345)), Some("12.345".to_owned()));
        assert_eq!(
            text(serde_json::from_str("123456789012345678901234.5").unwrap()),
            Some("123456789012345678901234.5".to_owned())
        );
        for refused in [
            json!("0"),
            json!(0),
            json!(-1),
            json!("-1"),
            json!("1e3"),
            json!(" 1"),
            json!(null),
            json!(true),
            json!([1]),
        ] {
            assert_eq!(text(refused.clone()), None, "{refused}");
        }
    }

    #[test]
    fn amounts_keep_two_decimals_and_are_never_rounded() {
        let text = |v: Value| amount(&v).map(|a| a.to_text());
        assert_eq!(text(json!("15")), Some("15.00".to_owned()));
        assert_eq!(text(json!(0)), Some("0.00".to_owned()));
        assert_eq!(
            text(json!("9999999999.99")),
            Some("9999999999.99".to_owned())
        );
        for refused in [
            json!("15.001"),
            json!(-0.01),
            json!("10000000000"),
            json!("x"),
        ] {
            assert_eq!(text(refused.clone()), None, "{refused}");
        }
    }
}
