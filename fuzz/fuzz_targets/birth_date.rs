//! `birth_date` as the profile route reads it (`auth_service::birth_date::parse`): no input
//! panics; null and only null clears; an accepted date lies in the years 0000 to 9999 and
//! its `YYYY-MM-DD` text reads back as itself; a number is the UTC date of that many epoch
//! milliseconds. The input is tried as a JSON string's text and, when it is JSON, as that
//! value. The assertions are the property tests' own (`check_fuzz_input`, which `make test`
//! runs on every seed): services/auth-service/tests/parsers/birth_date_checks.rs.

#![no_main]

#[macro_use]
#[path = "check_each_input.rs"]
mod check_each_input;

check_each_input!(
    "../../services/auth-service/tests/parsers/birth_date_checks.rs",
    quiet_panics
);
