//! The auth service: client accounts, login by SMS code, tokens, profile, push setting,
//! device registration and address book (`/api/v1/clients/...`), the caller lookup for the
//! other services (`/api/v1/users`) and their internal profile route.

pub mod address_book;
pub mod birth_date;
pub mod caller;
pub mod client_limits;
pub mod clock;
pub mod config;
pub mod db;
pub mod error;
pub mod handlers;
pub mod housekeeping;
pub mod otp;
pub mod phone;
pub mod profile;
pub mod profile_update;
pub mod routes;
pub mod seed;
pub mod sms;
pub mod startup;
pub mod state;
pub mod tokens;

/// The binary's name, used in logs, traces and metrics.
pub const SERVICE: &str = "auth-service";
/// `BIND_ADDR`'s default port.
pub const DEFAULT_PORT: u16 = 8081;
