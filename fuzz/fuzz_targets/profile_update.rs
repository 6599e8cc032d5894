//! The bodies of `PUT /api/v1/clients/{client_id}` and `PUT /api/v1/clients/setting`
//! (`auth_service::profile_update`): no input panics; blank or non-object JSON reads as
//! `{}`, other non-JSON is refused; the answer is the first broken rule in the spec's order
//! or exactly the asked-for changes. The assertions are the property tests' own:
//! services/auth-service/tests/parsers/profile_update_checks.rs.

#![no_main]

use libfuzzer_sys::fuzz_target;

#[allow(dead_code)]
#[path = "../../services/auth-service/tests/parsers/profile_update_checks.rs"]
mod checks;

#[path = "quiet_panics.rs"]
mod quiet_panics;

fuzz_target!(init: quiet_panics::install(), |data: &[u8]| {
    // The first byte picks the path id: mostly the caller's own, sometimes another.
    let (path, raw) = match data.split_first() {
        Some((b, rest)) if b % 8 == 0 => ("1002", rest),
        Some((_, rest)) => ("1001", rest),
        None => ("1001", data),
    };
    if let Err(problem) = checks::check_raw(path, raw) {
        panic!("{problem}");
    }
});
