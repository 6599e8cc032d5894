//! Property tests of the profile and push-setting body readers: the first broken rule in
//! the spec's order is the answer, otherwise exactly the asked-for changes.

use auth_service::profile_update::{ProfileRefusal, switch};
use proptest::prelude::*;
use proptest::sample::select;
use serde_json::{Map, Number, Value, json};

use super::any_json;
use super::profile_update_checks::{
    CLIENT_ID, check_profile, check_push, check_raw, first_error, sex_model, switch_model,
};

fn fail(e: String) -> TestCaseError {
    TestCaseError::fail(e)
}

fn path() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => Just(CLIENT_ID.to_string()),
        1 => Just(format!(" {CLIENT_ID} ")),
        1 => any::<i64>().prop_map(|n| n.to_string()),
        1 => "\\PC{0,6}",
    ]
}

fn client_id() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(json!(CLIENT_ID)),
        Just(json!(CLIENT_ID.to_string())),
        Just(json!(format!("\t{CLIENT_ID} "))),
        Just(json!(1001.0)),
        Just(Value::Null),
        Just(json!(true)),
        Just(json!([CLIENT_ID])),
        any::<i64>().prop_map(|n| json!(n)),
        any::<i64>().prop_map(|n| json!(n.to_string())),
    ]
}

fn phone() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(json!("+966500000001")),
        Just(json!(" +966 50 000 0001\t")),
        Just(json!("966500000001")),
        Just(json!("+966500000002")),
        Just(json!("")),
        Just(json!(966_500_000_001_i64)),
        Just(Value::Null),
        "[+0-9 ]{0,16}".prop_map(|s| json!(s)),
    ]
}

/// A name: null, text of 0 to 100 characters after trimming (two-byte and four-byte
/// characters too), or more, or not text.
fn name() -> impl Strategy<Value = Value> {
    let padded = |len: std::ops::RangeInclusive<usize>| {
        (
            "[ \\t\\n\\u{a0}\\u{3000}]{0,3}",
            len,
            select(vec!['a', 'é', '😀', 'ن']),
            "\\S",
            "[ \\t\\n\\u{a0}\\u{3000}]{0,3}",
        )
            .prop_map(|(l, n, fill, last, r)| {
                let core = if n == 0 {
                    String::new()
                } else {
                    format!("{}{last}", fill.to_string().repeat(n - 1))
                };
                json!(format!("{l}{core}{r}"))
            })
    };
    prop_oneof![
        1 => Just(Value::Null),
        4 => padded(0..=100),
        1 => padded(99..=102),
        1 => "\\PC{0,20}".prop_map(|s| json!(s)),
        1 => prop_oneof![Just(json!(5)), Just(json!(true)), Just(json!(["Sara"])), Just(json!({}))],
    ]
}

fn email() -> impl Strategy<Value = Value> {
    prop_oneof![
        3 => "[ \\t]{0,2}[a-z]{1,8}@[a-z]{1,8}\\.com[ \\t]{0,2}".prop_map(|s| json!(s)),
        1 => "\\PC{0,20}".prop_map(|s| json!(s)),
        1 => Just(Value::Null),
        1 => prop_oneof![Just(json!(5)), Just(json!(false)), Just(json!(["a@b.c"]))],
    ]
}

fn birth_date() -> impl Strategy<Value = Value> {
    prop_oneof![
        3 => (1900i32..2030, 1u32..=12, 1u32..=31).prop_map(|(y, m, d)| json!(format!("{y:04}-{m:02}-{d:02}"))),
        1 => Just(Value::Null),
        1 => select(vec!["", "   ", "not a date", "1990-02-30", "1990-05-01 +2500"]).prop_map(|s| json!(s)),
        1 => prop_oneof![Just(json!(641_520_000_000_i64)), Just(json!(true)), Just(json!([])), Just(json!(1e300))],
    ]
}

/// Values for the two switches and sex: every spelling of 1 and 2, and their near misses.
fn switch_like() -> impl Strategy<Value = Value> {
    prop_oneof![
        select(vec![
            "1", "\"1\"", "true", "1.0", "1e0", "10e-1", "0.1e1", "2", "\"2\"", "2.0", "2e0", "0",
            "\"0\"", "false", "null", "\"true\"", "1.5", "\" 1\"", "\"1.0\"", "\" 2 \"", "\"+2\"",
            "\"02\"", "9", "-1", "[1]", "{}", "\"x\"",
        ])
        .prop_filter_map("json", |s| serde_json::from_str::<Value>(s).ok()),
        any::<i64>().prop_map(|n| json!(n)),
        any::<f64>().prop_filter_map("finite", |f| Number::from_f64(f).map(Value::Number)),
    ]
}

/// A body with each key present or not; unknown keys and push_enabled mixed in.
fn body() -> impl Strategy<Value = Map<String, Value>> {
    (
        prop::option::weighted(0.4, client_id()),
        prop::option::weighted(0.3, phone()),
        prop::option::weighted(0.6, name()),
        prop::option::weighted(0.6, name()),
        prop::option::weighted(0.5, email()),
        prop::option::weighted(0.5, birth_date()),
        prop::option::weighted(0.5, switch_like()),
        prop::option::weighted(0.5, switch_like()),
        prop::option::weighted(0.3, switch_like()),
        prop::option::weighted(0.3, any_json()),
    )
        .prop_map(
            |(client, phone, first, last, email, birth, sex, offers, push, extra)| {
                let mut body = Map::new();
                for (key, value) in [
                    ("client_id", client),
                    ("contact_phone", phone),
                    ("first_name", first),
                    ("last_name", last),
                    ("email_address", email),
                    ("birth_date", birth),
                    ("sex", sex),
                    ("receive_offers", offers),
                    ("push_enabled", push),
                    ("status", extra),
                ] {
                    if let Some(value) = value {
                        body.insert(key.to_owned(), value);
                    }
                }
                body
            },
        )
}

proptest! {
    #[test]
    fn a_profile_update_is_the_first_broken_rule_or_exactly_the_changes(path in path(), body in body()) {
        check_profile(&path, &body).map_err(fail)?;
    }

    #[test]
    fn a_push_setting_checks_client_id_then_push_enabled(body in body()) {
        check_push(&body).map_err(fail)?;
    }

    #[test]
    fn any_json_body_gets_an_answer(value in any_json(), path in path()) {
        check_raw(&path, value.to_string().as_bytes()).map_err(fail)?;
        if let Value::Object(body) = &value {
            check_profile(&path, body).map_err(fail)?;
        }
    }

    #[test]
    fn any_bytes_get_an_answer(raw in prop::collection::vec(any::<u8>(), 0..128)) {
        check_raw(&CLIENT_ID.to_string(), &raw).map_err(fail)?;
    }

    #[test]
    fn long_names_and_emails_are_counted_in_characters(
        n in 95usize..=105, fill in select(vec!["a", "é", "😀"]), pad in 0usize..3,
    ) {
        let name = format!("{}{}{}", " ".repeat(pad), fill.repeat(n), "\u{3000}".repeat(pad));
        let body = json!({"first_name": name, "email_address": name});
        let Value::Object(body) = body else { unreachable!() };
        check_profile("1001", &body).map_err(fail)?;
        let answer = first_error("1001", &body);
        prop_assert_eq!(answer.is_some(), n > 100);
    }

    #[test]
    fn switches_and_sex_read_numbers_by_value(value in switch_like()) {
        prop_assert_eq!(switch(&value), switch_model(&value), "{}", value);
        let body = json!({"sex": value.clone(), "receive_offers": value.clone()});
        let Value::Object(body) = body else { unreachable!() };
        check_profile("1001", &body).map_err(fail)?;
    }
}

/// The models, pinned on the spec's own examples, so that a wrong model cannot agree with
/// a wrong reader.
#[test]
fn the_models_follow_the_spec_examples() {
    for on in [json!(1), json!("1"), json!(true), json!(1.0)] {
        assert_eq!(switch_model(&on), 1, "{on}");
    }
    for off in [
        json!(null),
        json!("true"),
        json!(2),
        json!(0),
        json!("0"),
        json!(1.5),
        json!(false),
    ] {
        assert_eq!(switch_model(&off), 0, "{off}");
    }
    for (value, sex) in [
        (json!(1), 1),
        (json!(2), 2),
        (json!("2"), 2),
        (json!(2.0), 2),
        (json!(0), 0),
        (json!(9), 0),
        (json!(null), 0),
        (json!("x"), 0),
    ] {
        assert_eq!(sex_model(&value), sex, "{value}");
    }
    let body = |v: Value| match v {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    assert_eq!(
        first_error("1002", &body(json!({}))),
        Some(ProfileRefusal::NotTheCaller.to_string())
    );
    assert_eq!(
        first_error("1001", &body(json!({"client_id": null}))),
        Some(ProfileRefusal::NotTheCaller.to_string())
    );
    assert_eq!(
        first_error(
            "1001",
            &body(json!({"contact_phone": "+966500000002", "first_name": 5}))
        ),
        Some(ProfileRefusal::PhoneChanged.to_string())
    );
    assert_eq!(
        first_error(
            "1001",
            &body(json!({"last_name": 5, "first_name": "x".repeat(101)}))
        ),
        Some("first_name is invalid".to_owned())
    );
    assert_eq!(
        first_error("1001", &body(json!({"birth_date": "", "email_address": 5}))),
        Some("email_address is invalid".to_owned())
    );
    assert_eq!(
        first_error("1001", &body(json!({"birth_date": ""}))),
        Some("birth_date is invalid".to_owned())
    );
    assert_eq!(
        first_error("1001", &body(json!({"first_name": "", "sex": "abc"}))),
        None
    );
    assert!(check_push(&body(json!({"push_enabled": 1}))).is_ok());
    assert!(check_push(&body(json!({"client_id": 1001}))).is_ok());
}
