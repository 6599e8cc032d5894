//! Domain types that more than one service uses. Each type parses raw input once, at the
//! edge, so that the rest of the code only ever holds valid values.

/// The rest of a value that is text checked by its `FromStr` (`struct T(String)`): its text
/// (`as_str`, `Display`), and serde through `FromStr` (`TryFrom<String>`, with
/// `#[serde(try_from = "String", into = "String")]` on the type), so that a value read from
/// JSON passed the same check as one read anywhere else.
macro_rules! checked_text {
    ($type:ident) => {
        impl $type {
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl TryFrom<String> for $type {
            type Error = $crate::ParseError;
            fn try_from(value: String) -> Result<Self, Self::Error> {
                value.parse()
            }
        }

        impl From<$type> for String {
            fn from(value: $type) -> String {
                value.0
            }
        }

        impl std::fmt::Display for $type {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&self.0)
            }
        }
    };
}

mod client_id;
pub mod decimal;
mod money;
mod object_id;
mod page;
mod phone;
mod points;

pub use client_id::ClientId;
pub use money::Money;
pub use object_id::ObjectId;
pub use page::PageMeta;
pub use phone::Phone;
pub use points::Points;

/// Why a raw value was refused. The message is for logs and developer-facing errors; the
/// services choose the exact client-facing text the spec gives for each route.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ParseError(pub String);
