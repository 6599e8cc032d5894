//! An amount of SAR with exactly two decimals, and its minor units (halalas).

use std::fmt;
use std::str::FromStr;

use bigdecimal::{BigDecimal, RoundingMode, ToPrimitive};
use serde::{Deserialize, Serialize};

use crate::ParseError;

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Money(BigDecimal);

impl Money {
    pub const DECIMALS: i64 = 2;

    /// Refuses negative amounts and amounts with more than two decimals instead of
    /// rounding them: a price is never silently changed.
    pub fn new(value: BigDecimal) -> Result<Self, ParseError> {
        if value.sign() == bigdecimal::num_bigint::Sign::Minus {
            return Err(ParseError(format!(
                "amount must not be negative, got {value}"
            )));
        }
        let scaled = value.with_scale_round(Self::DECIMALS, RoundingMode::HalfUp);
        if scaled != value {
            return Err(ParseError(format!(
                "amount must have at most two decimals, got {value}"
            )));
        }
        Ok(Self(scaled))
    }

    pub fn as_decimal(&self) -> &BigDecimal {
        &self.0
    }

    /// Halalas, as the payment service takes them: exact (an amount has at most two
    /// decimals), `None` past i64.
    pub fn minor_units(&self) -> Option<i64> {
        let minor = &self.0 * BigDecimal::from(100);
        minor.is_integer().then(|| minor.to_i64()).flatten()
    }

    /// Exactly two decimals: `15` → `15.00`.
    pub fn to_text(&self) -> String {
        self.0.with_scale(Self::DECIMALS).to_plain_string()
    }
}

impl FromStr for Money {
    type Err = ParseError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let plain = !s.is_empty()
            && s.bytes().all(|b| b.is_ascii_digit() || b == b'.')
            && s.bytes().any(|b| b.is_ascii_digit());
        if !plain {
            return Err(ParseError(format!(
                "expected an amount like 15.00, got {s:?}"
            )));
        }
        let value = BigDecimal::from_str(s)
            .map_err(|_| ParseError(format!("expected an amount like 15.00, got {s:?}")))?;
        Self::new(value)
    }
}

impl fmt::Display for Money {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_text())
    }
}

impl Serialize for Money {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.to_text())
    }
}

impl<'de> Deserialize<'de> for Money {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let s = String::deserialize(deserializer)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn money(s: &str) -> Money {
        s.parse().unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn text_has_exactly_two_decimals() {
        assert_eq!(money("15").to_text(), "15.00");
        assert_eq!(money("15.5").to_text(), "15.50");
        assert_eq!(money("0.01").to_text(), "0.01");
    }

    #[test]
    fn minor_units_are_halalas() {
        assert_eq!(money("15.00").minor_units(), Some(1500));
        assert_eq!(money("0.05").minor_units(), Some(5));
    }

    #[test]
    fn refuses_three_decimals_negatives_and_junk() {
        for bad in ["15.001", "-1", "", "1e2", "abc", "."] {
            assert!(bad.parse::<Money>().is_err(), "{bad:?} should be refused");
        }
    }
}
