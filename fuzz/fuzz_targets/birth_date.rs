//! `birth_date` as the profile route reads it (`auth_service::birth_date::parse`): no input
//! panics; null and only null clears; an accepted date lies in the years 0000 to 9999 and
//! its `YYYY-MM-DD` text reads back as itself; a number is the UTC date of that many epoch
//! milliseconds. The input is tried as a JSON string's text and, when it is JSON, as that
//! value. The assertions are the property tests' own (`check_fuzz_input`, which `make test`
//! runs on every seed): services/auth-service/tests/parsers/birth_date_checks.rs.

#![no_main]

use libfuzzer_sys::fuzz_target;

#[allow(dead_code)]
#[path = "../../services/auth-service/tests/parsers/birth_date_checks.rs"]
mod checks;

#[path = "quiet_panics.rs"]
mod quiet_panics;

fuzz_target!(init: quiet_panics::install(), |data: &[u8]| {
    if let Err(problem) = checks::check_fuzz_input(data) {
        panic!("{problem}");
    }
});
