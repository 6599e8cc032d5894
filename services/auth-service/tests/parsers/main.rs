//! Property tests of the auth service's input readers: the profile and push-setting bodies
//! and `birth_date`. The `*_checks` modules hold the assertions, which the fuzz targets in
//! `fuzz/` share.

mod birth_date;
mod birth_date_checks;
mod profile_update;
mod profile_update_checks;
#[path = "../../../../fuzz/replay.rs"]
mod replay;

use proptest::prelude::*;
use serde_json::{Number, Value};

/// Any JSON value, nested a few levels, with huge and tiny numbers, unicode, control
/// characters (NUL included) and keys that are often the profile's own field names.
pub fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_filter_map("finite", |f| Number::from_f64(f).map(Value::Number)),
        "[\\x00-\\x1f\\PC]{0,24}".prop_map(Value::String),
        prop::sample::select(vec![
            "1001",
            " 1001 ",
            "+966500000001",
            "1990-05-01",
            "May 1, 1990",
            "1",
            "2",
            "",
        ])
        .prop_map(Value::from),
    ];
    let key = prop_oneof![
        3 => prop::sample::select(vec![
            "client_id", "contact_phone", "first_name", "last_name", "email_address",
            "birth_date", "sex", "receive_offers", "push_enabled",
        ])
        .prop_map(str::to_owned),
        1 => "\\PC{0,8}",
    ];
    leaf.prop_recursive(5, 40, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((key.clone(), inner), 0..8)
                .prop_map(|entries| Value::Object(entries.into_iter().collect())),
        ]
    })
}

/// The fuzz targets `birth_date` and `profile_update` on their seeds (and local corpus), in
/// `make test`.
#[test]
fn the_fuzz_targets_seeds_pass_their_checks() {
    replay::replay_fuzz_inputs("birth_date", birth_date_checks::check_fuzz_input);
    replay::replay_fuzz_inputs("profile_update", profile_update_checks::check_fuzz_input);
}
