//! A 24-hex-character object id (offers, occasions, addresses). Ids come from the legacy
//! document store; they are compared, never decoded. Either case is accepted and the id is
//! kept in lower case so that lookups match however the app spelled it.

use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::ParseError;

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct ObjectId(String);

impl ObjectId {
    pub const LEN: usize = 24;

    /// True when `s` is exactly 24 ASCII hex digits.
    pub fn is_valid(s: &str) -> bool {
        s.len() == Self::LEN && s.bytes().all(|b| b.is_ascii_hexdigit())
    }
}

impl FromStr for ObjectId {
    type Err = ParseError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if Self::is_valid(s) {
            Ok(Self(s.to_ascii_lowercase()))
        } else {
            Err(ParseError(format!(
                "expected a 24-character hex ObjectId, got {s:?}"
            )))
        }
    }
}

checked_text!(ObjectId);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_24_hex_in_either_case() {
        let id: ObjectId = "64B7F0C2A1B2C3D4E5F60718"
            .parse()
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(id.as_str(), "64b7f0c2a1b2c3d4e5f60718");
    }

    #[test]
    fn refuses_everything_else() {
        for bad in [
            "",
            "3",
            "64b7f0c2a1b2c3d4e5f6071",
            "64b7f0c2a1b2c3d4e5f607189",
            "64b7f0c2a1b2c3d4e5f6071g",
            " 64b7f0c2a1b2c3d4e5f6071",
        ] {
            assert!(
                bad.parse::<ObjectId>().is_err(),
                "{bad:?} should be refused"
            );
        }
    }
}
