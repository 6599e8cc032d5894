//! The error bodies the API documents fix, each an actix `ResponseError`:
//!
//! | type            | body                                                   | used by                         |
//! |-----------------|--------------------------------------------------------|---------------------------------|
//! | [`ErrorA`]      | `{status, message, stack?}`                            | auth service                    |
//! | [`ErrorB`]      | `{success: false, error: {code, message, details?}}`   | point routes                    |
//! | [`ErrorC`]      | `{message, statusCode}`                                | order service's own routes      |
//! | [`OperatorError`] | `{statusCode, message, error}`                       | operator service                |
//! | [`BackOfficeError`] | `{statusCode, message, error, code}`               | the back office's refusals      |
//!
//! [`Envelope`] names them so that the shared handlers (bad JSON, bad path, unknown
//! route) answer in whichever one a scope uses, and [`exposure`] decides per app whether
//! internals (raw error text, `stack`) may be shown.

pub mod body_limits;
pub mod depth;
mod details;
pub mod encoding;
mod envelopes;
pub mod error_handlers;
pub mod exposure;
pub mod openapi;
pub mod refusal;
mod respond;
mod retry_after;

pub use details::Details;
pub use envelopes::{
    BackOfficeError, Envelope, ErrorA, ErrorB, ErrorC, INTERNAL_MESSAGE, OperatorError,
};
pub use refusal::{Only, Refusal, Refused, Refuses};
pub use retry_after::RetryAfter;
/// For [`refusals!`]'s expansion in crates that do not name utoipa themselves.
#[doc(hidden)]
pub use utoipa;
