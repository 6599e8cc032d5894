//! Domain types that more than one service uses. Each type parses raw input once, at the
//! edge, so that the rest of the code only ever holds valid values.

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
