//! A client account id: a positive 64-bit integer, as the auth service issues them.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::ParseError;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "i64", into = "i64")]
pub struct ClientId(i64);

impl ClientId {
    pub fn new(value: i64) -> Result<Self, ParseError> {
        if value > 0 {
            Ok(Self(value))
        } else {
            Err(ParseError(format!(
                "client id must be a positive integer, got {value}"
            )))
        }
    }

    pub fn get(self) -> i64 {
        self.0
    }
}

impl TryFrom<i64> for ClientId {
    type Error = ParseError;
    fn try_from(value: i64) -> Result<Self, Self::Error> {
        Self::new(value)
    }
}

impl From<ClientId> for i64 {
    fn from(id: ClientId) -> i64 {
        id.0
    }
}

impl FromStr for ClientId {
    type Err = ParseError;
    /// Reads decimal digits only: no sign, no spaces, no fraction.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
            return Err(ParseError(format!(
                "client id must be a positive integer, got {s:?}"
            )));
        }
        let value: i64 = s
            .parse()
            .map_err(|_| ParseError(format!("client id out of range: {s:?}")))?;
        Self::new(value)
    }
}

impl fmt::Display for ClientId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_positive_integers_only() {
        assert_eq!(ClientId::new(1001).map(ClientId::get), Ok(1001));
        assert!(ClientId::new(0).is_err());
        assert!(ClientId::new(-5).is_err());
    }

    #[test]
    fn parses_plain_digits() {
        assert_eq!("1001".parse::<ClientId>().map(ClientId::get), Ok(1001));
        for bad in ["", " 1", "+1", "1.0", "abc", "0", "99999999999999999999"] {
            assert!(
                bad.parse::<ClientId>().is_err(),
                "{bad:?} should be refused"
            );
        }
    }

    #[test]
    fn serde_refuses_non_positive() {
        assert!(serde_json::from_str::<ClientId>("0").is_err());
        assert_eq!(
            serde_json::from_str::<ClientId>("7")
                .map(ClientId::get)
                .ok(),
            Some(7)
        );
    }
}
