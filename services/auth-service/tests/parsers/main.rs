//! Property tests of the auth service's input readers: the profile and push-setting bodies
//! and `birth_date`. The `*_checks` modules hold the assertions, which the fuzz targets in
//! `fuzz/` share.

mod birth_date;
mod birth_date_checks;
mod profile_update;
mod profile_update_checks;

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

/// Every input of the cargo-fuzz target `target`: its committed seeds
/// (`fuzz/seeds/<target>/`, which must exist and hold at least one file) and, when a local
/// `make fuzz` left one, its corpus (`fuzz/corpus/<target>/`).
fn fuzz_inputs(target: &str) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let fuzz = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz");
    let mut inputs = Vec::new();
    for folder in ["seeds", "corpus"] {
        let dir = fuzz.join(folder).join(target);
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(_) if folder == "corpus" => continue,
            Err(e) => panic!("{}: {e}", dir.display()),
        };
        for entry in entries {
            let path = entry
                .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
                .path();
            if path.is_file() {
                let data =
                    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                inputs.push((path, data));
            }
        }
    }
    assert!(
        inputs
            .iter()
            .any(|(path, _)| path.starts_with(fuzz.join("seeds"))),
        "no seeds for the fuzz target {target}"
    );
    inputs.sort();
    inputs
}

/// Runs `check` on every input of the fuzz target `target`, as the target does, and fails
/// with each input the target would report (a failed check or a panic), by file.
fn replay_fuzz_inputs(target: &str, check: impl Fn(&[u8]) -> Result<(), String>) {
    let inputs = fuzz_inputs(target);
    let problems: Vec<String> = inputs
        .iter()
        .filter_map(|(path, data)| {
            let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check(data)));
            match outcome {
                Ok(Ok(())) => None,
                Ok(Err(problem)) => Some(format!("{}: {problem}", path.display())),
                Err(_) => Some(format!("{}: panicked", path.display())),
            }
        })
        .collect();
    assert!(
        problems.is_empty(),
        "{} of {} inputs of the fuzz target {target} fail its checks:\n{}",
        problems.len(),
        inputs.len(),
        problems.join("\n")
    );
}

/// The fuzz targets `birth_date` and `profile_update` on their seeds (and local corpus), in
/// `make test`.
#[test]
fn the_fuzz_targets_seeds_pass_their_checks() {
    replay_fuzz_inputs("birth_date", birth_date_checks::check_fuzz_input);
    replay_fuzz_inputs("profile_update", profile_update_checks::check_fuzz_input);
}
