//! The points text (`domain::Points`, `docs/design.md`: rounded half away from zero to 4
//! decimals, then trailing zeros and a trailing dot removed). Text input: reading never
//! panics, and what is read is written as a digit-by-digit reference rounds it. Any input
//! also makes a decimal from an unscaled integer and a scale (as the database hands them
//! over): its text has no exponent, no trailing zero or dot, and reads back as the value
//! rounded to 4 places half away from zero (checked with exact arithmetic). The assertions,
//! and how an input is read, are the property tests' own (`check_fuzz_input`, which
//! `make test` runs on every seed): crates/domain/tests/points_text/checks.rs.

#![no_main]

#[macro_use]
#[path = "check_each_input.rs"]
mod check_each_input;

check_each_input!("../../crates/domain/tests/points_text/checks.rs");
