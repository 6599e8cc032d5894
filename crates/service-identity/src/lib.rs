//! Each service its own identity (docs/design.md, "Service identity"; docs/decisions.md,
//! "Each service speaks for itself"). A call from one of our services to another carries a
//! credential the caller signed with its own key, naming itself and the callee and expiring
//! within minutes, and for a change, made for its one request, body included (`credential`);
//! the callee checks it against the public keys it trusts (`keys`) and the written list of who
//! may call the route (`service`). No service holds
//! anything that lets it speak as another.

pub mod config;
pub mod credential;
pub mod keys;
pub mod service;

pub use credential::{Admitted, Refusal, Request, Signer, Verifier, Vouched};
pub use keys::{OwnKey, Trust};
pub use service::{InternalRoute, Service};

/// The 401's message: the credential is missing, forged, expired or not for this call.
pub const UNAUTHENTICATED: &str = "invalid service credential";

/// The 403's message, for a caller the route does not admit (the log names the caller).
pub const NOT_ADMITTED: &str = "the calling service may not call this route";
