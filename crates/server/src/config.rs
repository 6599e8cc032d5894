//! Configuration from environment variables, read once at start into typed structs.
//!
//! [`Env`] collects every problem instead of stopping at the first, and names the variable
//! in each, so that a bad deployment shows all its mistakes in one go, one line each.
//! Tests build config structs directly (or an [`Env`] from pairs) and never touch the
//! process environment.
//!
//! - `env`: the reader ([`Env`]) and its plain values (required, integers, choices, flags);
//! - `secret`: [`Secret`] and the readers that never repeat a secret value;
//! - `urls`: `http(s)://` URLs, reported without their credentials;
//! - `common`: what every service reads ([`CommonConfig`], [`AppEnv`]);
//! - `http_limits`: the connection and slow-client limits ([`HttpLimits`]);
//! - `database`: the database's URL and pool ([`DatabaseConfig`]).

mod common;
mod database;
mod env;
mod http_limits;
mod secret;
mod urls;

pub use common::{AppEnv, CommonConfig};
pub use database::DatabaseConfig;
pub use env::{ConfigError, Env};
pub use http_limits::HttpLimits;
pub use secret::Secret;

/// An [`Env`] of `pairs`, as the tests of each part build it.
#[cfg(test)]
fn env(pairs: &[(&str, &str)]) -> Env {
    Env::from_vars(pairs.iter().copied())
}
