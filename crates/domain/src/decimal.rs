//! Decimals in JSON, exactly. serde_json keeps a number's text (`arbitrary_precision`), so a
//! JSON number such as `9.125` or `123456789012345678901234.5` becomes the decimal it
//! writes, never the nearest f64; answers write a decimal back as a plain JSON number.

use std::str::FromStr;

use bigdecimal::BigDecimal;
use serde_json::Number;

use crate::ParseError;

/// Digits a decimal may have before its point: PostgreSQL's `NUMERIC` limit. Checked before
/// any arithmetic, so that `1e999999999` is refused instead of expanded.
pub const MAX_INTEGER_DIGITS: i64 = 131_072;
/// Digits a decimal may have after its point: PostgreSQL's `NUMERIC` limit.
pub const MAX_FRACTION_DIGITS: i64 = 16_383;

/// Refuses a decimal that PostgreSQL's `NUMERIC` cannot hold exactly.
pub fn check_range(value: BigDecimal) -> Result<BigDecimal, ParseError> {
    let (unscaled, scale) = value.as_bigint_and_exponent();
    let digits =
        i64::try_from(unscaled.to_string().trim_start_matches('-').len()).unwrap_or(i64::MAX);
    // Trailing zeros of the unscaled integer do not count after the point (`1.500`).
    let zeros = i64::try_from(
        unscaled
            .to_string()
            .bytes()
            .rev()
            .take_while(|b| *b == b'0')
            .count(),
    )
    .unwrap_or(0);
    let fraction = if unscaled.sign() == bigdecimal::num_bigint::Sign::NoSign {
        0
    } else {
        scale.saturating_sub(zeros).max(0)
    };
    let integer = digits.saturating_sub(scale);
    if fraction > MAX_FRACTION_DIGITS {
        return Err(ParseError(format!(
            "a decimal may have at most {MAX_FRACTION_DIGITS} digits after the point"
        )));
    }
    if integer > MAX_INTEGER_DIGITS {
        return Err(ParseError(format!(
            "a decimal may have at most {MAX_INTEGER_DIGITS} digits before the point"
        )));
    }
    Ok(value)
}

/// A JSON number's exact decimal: its own text, exponent included (`1.5e3` is 1500).
pub fn from_number(number: &Number) -> Result<BigDecimal, ParseError> {
    let text = number.to_string();
    BigDecimal::from_str(&text)
        .map_err(|_| ParseError(format!("{text} is not a decimal number")))
        .and_then(check_range)
}

/// The JSON number of a decimal: plain notation (no exponent), no trailing zeros, integral
/// values without a fraction (`100.0` → `100`, `9.1250` → `9.125`, `-0.0` → `0`).
pub fn to_number(value: &BigDecimal) -> Number {
    let plain = value.normalized().to_plain_string();
    // Plain decimal text is always a JSON number; the fallback is unreachable.
    Number::from_str(&plain).unwrap_or_else(|_| Number::from(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn number(text: &str) -> Number {
        serde_json::from_str(text).unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    fn exact(text: &str) -> String {
        from_number(&number(text))
            .map(|d| to_number(&d).to_string())
            .unwrap_or_else(|e| e.0)
    }

    #[test]
    fn numbers_keep_every_digit_and_integral_values_are_written_as_integers() {
        for (number, expected) in [
            ("9.125", "9.125"),
            ("7.75", "7.75"),
            ("0.1", "0.1"),
            ("123456789012345678901234.5", "123456789012345678901234.5"),
            (
                "0.123456789012345678901234567",
                "0.123456789012345678901234567",
            ),
            ("9007199254740993", "9007199254740993"),
            ("100.0", "100"),
            ("100", "100"),
            ("1.5e3", "1500"),
            ("1E2", "100"),
            ("-0.0", "0"),
            ("12.50", "12.5"),
        ] {
            assert_eq!(exact(number), expected, "{number}");
        }
    }

    #[test]
    fn what_numeric_cannot_hold_is_refused_before_it_is_expanded() {
        assert!(exact("1e999999999").contains("before the point"));
        assert!(exact("1e-999999999").contains("after the point"));
        assert_eq!(exact("1e131071").len(), 131_072);
        assert!(exact("1e131072").contains("before the point"));
        assert_eq!(exact("1.000e-16383"), format!("0.{}1", "0".repeat(16_382)));
    }
}
