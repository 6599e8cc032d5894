//! A phone number as the accounts hold it: a leading `+` and then digits only.

use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::ParseError;

#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Phone(String);

impl Phone {
    /// The spec compares a sent phone to the stored one "with whitespace removed";
    /// this is that normal form, without any other rewriting.
    pub fn strip_whitespace(raw: &str) -> String {
        raw.chars().filter(|c| !c.is_whitespace()).collect()
    }
}

impl FromStr for Phone {
    type Err = ParseError;
    /// Whitespace is dropped; the rest must be `+` and 7 to 15 digits (E.164).
    fn from_str(raw: &str) -> Result<Self, Self::Err> {
        let s = Self::strip_whitespace(raw);
        let digits = s.strip_prefix('+').unwrap_or("");
        if (7..=15).contains(&digits.len()) && digits.bytes().all(|b| b.is_ascii_digit()) {
            Ok(Self(s))
        } else {
            Err(ParseError(format!(
                "expected a phone number like +966500000001, got {raw:?}"
            )))
        }
    }
}

checked_text!(Phone);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_plus_and_digits_drops_spaces() {
        let p: Phone = " +966 500 000 001 "
            .parse()
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(p.as_str(), "+966500000001");
    }

    #[test]
    fn refuses_missing_plus_letters_and_lengths() {
        for bad in [
            "966500000001",
            "+9665abc",
            "+123",
            "+1234567890123456",
            "",
            "+",
        ] {
            assert!(bad.parse::<Phone>().is_err(), "{bad:?} should be refused");
        }
    }
}
