//! What the services' API tests (`services/*/tests/`) and the end-to-end tests (`tests/`)
//! share, so that each rule of the spec is written once in the tests too:
//!
//! - [`envelopes`]: the exact bodies of the four error envelopes (`docs/spec/`), as the
//!   tests expect them;
//! - [`answers`]: an HTTP answer as `(status, JSON body)`, a body's keys in order, and a
//!   429's `Retry-After` against the wait expected;
//! - [`tokens`]: JWTs with any header, claims and signature (forgeries included), and the
//!   payment webhook's `X-Signature`;
//! - [`config`]: the part of a service's configuration every API test starts it with;
//! - [`seed`]: fixtures loaded as a service's `seed` subcommand loads them;
//! - [`metrics`]: a series' value on a service's `/metrics`;
//! - [`nats`]: a NATS server with JetStream of a test's own.
//!
//! A dev-dependency only: nothing in a service binary uses it. The expected bodies are
//! written out here as JSON, never taken from the `envelope` crate, so that a test of an
//! envelope can fail when the envelope is wrong.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers fail loudly on purpose

pub mod answers;
pub mod back_office;
pub mod closed_sets;
pub mod command;
pub mod config;
pub mod envelopes;
pub mod identity;
pub mod metrics;
pub mod nats;
pub mod seed;
pub mod tokens;

pub use answers::{answer, assert_wait, ids, keys, retry_after};
pub use envelopes::{
    back_office_error, error_a, error_b, error_c, operator_401, operator_403, operator_error,
    refused, unauthorization, without_stack,
};
