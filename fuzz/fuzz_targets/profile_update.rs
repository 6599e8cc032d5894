//! The bodies of `PUT /api/v1/clients/{client_id}` and `PUT /api/v1/clients/setting`
//! (`auth_service::profile_update`): no input panics; blank or non-object JSON reads as
//! `{}`, other non-JSON is refused; the answer is the first broken rule in the spec's order
//! or exactly the asked-for changes; the first byte picks the path id. The assertions are the
//! property tests' own (`check_fuzz_input`, which `make test` runs on every seed):
//! services/auth-service/tests/parsers/profile_update_checks.rs.

#![no_main]

#[macro_use]
#[path = "check_each_input.rs"]
mod check_each_input;

check_each_input!(
    "../../services/auth-service/tests/parsers/profile_update_checks.rs",
    quiet_panics
);
