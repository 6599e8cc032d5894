//! `birth_date` as the profile route reads it (`auth_service::birth_date::parse`): no input
//! panics; null and only null clears; an accepted date lies in the years 0000 to 9999 and
//! its `YYYY-MM-DD` text reads back as itself; a number is the UTC date of that many epoch
//! milliseconds. The input is tried as a JSON string's text and, when it is JSON, as that
//! value. The assertions are the property tests' own:
//! services/auth-service/tests/parsers/birth_date_checks.rs.

#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;

#[allow(dead_code)]
#[path = "../../services/auth-service/tests/parsers/birth_date_checks.rs"]
mod checks;

#[path = "quiet_panics.rs"]
mod quiet_panics;

fuzz_target!(init: quiet_panics::install(), |data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data)
        && let Err(problem) = checks::check_value(&Value::String(text.to_owned()))
    {
        panic!("{problem}");
    }
    if let Ok(value) = serde_json::from_slice::<Value>(data)
        && let Err(problem) = checks::check_value(&value)
    {
        panic!("{problem}");
    }
});
