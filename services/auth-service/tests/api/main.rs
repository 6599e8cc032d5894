//! The auth service over real HTTP against a real database of its own.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on purpose

mod address_book;
mod device;
mod helpers;
mod housekeeping;
mod internal;
mod limits;
mod login;
mod openapi;
mod profile;
mod retry_after;
mod seed;
mod setting;
mod sms_send;
mod stack;
mod tokens;
