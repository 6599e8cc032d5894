//! Points: an exact decimal (never a float) and the text form the balance answers with.

use std::fmt;
use std::ops::{Add, Neg, Sub};
use std::str::FromStr;

use bigdecimal::{BigDecimal, RoundingMode, Zero};
use serde::{Deserialize, Serialize};

use crate::ParseError;

/// A number of points. Stored as `NUMERIC`; may be negative (a balance can be).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Points(BigDecimal);

impl Points {
    /// Decimals the balance text keeps.
    pub const TEXT_DECIMALS: i64 = 4;

    pub fn new(value: BigDecimal) -> Self {
        Self(value)
    }

    pub fn zero() -> Self {
        Self(BigDecimal::zero())
    }

    pub fn as_decimal(&self) -> &BigDecimal {
        &self.0
    }

    pub fn into_decimal(self) -> BigDecimal {
        self.0
    }

    pub fn is_negative(&self) -> bool {
        self.0 < BigDecimal::zero()
    }

    /// The spec's text: rounded half away from zero to 4 decimals, then trailing zeros and
    /// a trailing dot removed. `500.50000` → `500.5`, `100.0` → `100`, `-0.00004` → `0`.
    pub fn to_text(&self) -> String {
        let rounded = self
            .0
            .with_scale_round(Self::TEXT_DECIMALS, RoundingMode::HalfUp)
            .normalized();
        if rounded.is_zero() {
            // BigDecimal keeps no negative zero, but make the intent plain.
            return "0".to_owned();
        }
        rounded.to_plain_string()
    }
}

impl FromStr for Points {
    type Err = ParseError;
    /// Plain decimal text (`"500.5"`, `"-3"`); no exponent, no spaces. The minus sign only
    /// in front: bigdecimal would read `.-5` as -0.05.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let unsigned = s.strip_prefix('-').unwrap_or(s);
        let plain = unsigned.bytes().all(|b| b.is_ascii_digit() || b == b'.')
            && unsigned.bytes().any(|b| b.is_ascii_digit());
        if !plain {
            return Err(ParseError(format!(
                "expected a decimal number of points, got {s:?}"
            )));
        }
        BigDecimal::from_str(s)
            .map_err(|_| ParseError(format!("expected a decimal number of points, got {s:?}")))
            .and_then(crate::decimal::check_range)
            .map(Self)
    }
}

impl fmt::Display for Points {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_text())
    }
}

impl From<i64> for Points {
    fn from(v: i64) -> Self {
        Self(BigDecimal::from(v))
    }
}

impl Add for Points {
    type Output = Points;
    fn add(self, rhs: Points) -> Points {
        Points(self.0 + rhs.0)
    }
}

impl Sub for Points {
    type Output = Points;
    fn sub(self, rhs: Points) -> Points {
        Points(self.0 - rhs.0)
    }
}

impl Neg for Points {
    type Output = Points;
    fn neg(self) -> Points {
        Points(-self.0)
    }
}

/// Points travel as their text form, so that no JSON float ever carries them.
impl Serialize for Points {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.to_text())
    }
}

/// Accepts the text form (`"500.5"`) and a JSON number, read exactly (`9.125`,
/// `123456789012345678901234.5`, `1.5e3`): never through an f64. Read through a `Value`,
/// which keeps a number's text (serde_json's `arbitrary_precision`) on every path, the
/// buffered ones (`untagged`, `flatten`) included.
impl<'de> Deserialize<'de> for Points {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match serde_json::Value::deserialize(deserializer)? {
            serde_json::Value::String(s) => s.parse().map_err(serde::de::Error::custom),
            serde_json::Value::Number(n) => crate::decimal::from_number(&n)
                .map(Points)
                .map_err(serde::de::Error::custom),
            other => Err(serde::de::Error::custom(format!(
                "expected a decimal number of points, got {other}"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(s: &str) -> String {
        s.parse::<Points>()
            .map(|p| p.to_text())
            .unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn text_rounds_half_away_from_zero_to_four_decimals_and_stays_plain() {
        for (value, expected) in [
            // Trailing zeros and a trailing dot go.
            ("500.5000", "500.5"),
            ("100.0", "100"),
            ("100", "100"),
            ("1200", "1200"),
            ("0", "0"),
            ("0.0000", "0"),
            // Half away from zero, at the fifth decimal.
            ("1.23455", "1.2346"),
            ("1.23454", "1.2345"),
            ("-1.23455", "-1.2346"),
            ("0.00005", "0.0001"),
            ("-0.00004", "0"),
            ("9.99995", "10"),
            // Large values without an exponent.
            ("100000000000000000000", "100000000000000000000"),
            ("-250", "-250"),
        ] {
            assert_eq!(text(value), expected, "{value}");
        }
    }

    #[test]
    fn parse_refuses_floats_in_disguise() {
        for bad in ["", "1e5", " 1", "abc", "NaN", "-"] {
            assert!(bad.parse::<Points>().is_err(), "{bad:?} should be refused");
        }
    }

    #[test]
    fn serde_round_trip_is_text() {
        let p: Points = serde_json::from_str("\"500.50\"").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(serde_json::to_string(&p).ok().as_deref(), Some("\"500.5\""));
        let i: Points = serde_json::from_str("100").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(i.to_text(), "100");
    }

    #[test]
    fn json_numbers_are_read_exactly() {
        for (json, exact) in [
            ("9.125", "9.125"),
            ("0.1", "0.1"),
            ("100.0", "100"),
            ("123456789012345678901234.5", "123456789012345678901234.5"),
            ("0.000000000000000000001", "0.000000000000000000001"),
            ("-7.75", "-7.75"),
        ] {
            let direct: Points = serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}"));
            let value: serde_json::Value =
                serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}"));
            let via_value = Points::deserialize(&value).unwrap_or_else(|e| panic!("{e}"));
            let expected: BigDecimal = exact.parse().unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(direct.as_decimal(), &expected, "{json}");
            assert_eq!(via_value.as_decimal(), &expected, "{json} via a Value");
        }
        for bad in ["true", "null", "[1]", "\"1e5\"", "1e999999999"] {
            assert!(serde_json::from_str::<Points>(bad).is_err(), "{bad}");
        }
    }
}
