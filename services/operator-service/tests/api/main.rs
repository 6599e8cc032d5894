//! The operator service over real HTTP against a real database of its own.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly on purpose

mod back_office;
mod children;
mod helpers;
mod openapi;
mod permissions;
mod seed;
mod services;
