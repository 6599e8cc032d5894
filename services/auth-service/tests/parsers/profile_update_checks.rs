//! What any answer of the profile and push-setting body readers must satisfy. Shared by the
//! property tests and the fuzz target `fuzz/fuzz_targets/profile_update.rs`.

use auth_service::birth_date;
use auth_service::profile::Profile;
use auth_service::profile_update::{self, ProfileChanges, ProfileRefusal, SettingRefusal};
use serde_json::{Map, Value};

pub const CLIENT_ID: i64 = 1001;
pub const PHONE: &str = "+966500000001";

/// The caller every check reads against.
pub fn caller() -> Profile {
    Profile {
        client_id: CLIENT_ID,
        odoo_id: "1001".into(),
        contact_phone: PHONE.into(),
        status: "active".into(),
        email_address: None,
        first_name: None,
        last_name: None,
        sex: 0,
        birth_date: None,
        receive_offers: 0,
        push_enabled: 0,
        is_food_truck_user: 0,
        is_cod_disabled: 0,
    }
}

/// `client_id` names the caller: the same number (by value: `1001.0` too) or text that is
/// that integer.
pub fn names_caller(value: &Value) -> bool {
    match value {
        Value::Number(n) => n.as_f64() == Some(CLIENT_ID as f64),
        Value::String(s) => s.trim().parse::<i64>() == Ok(CLIENT_ID),
        _ => false,
    }
}

/// The spec's switch: only `1`, `"1"` and `true` are on. A JSON number counts by its value:
/// `1.0` and `1e0` are the number 1 as much as `1` is.
pub fn switch_model(value: &Value) -> i16 {
    let on = match value {
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64() == Some(1.0),
        Value::String(s) => s == "1",
        _ => false,
    };
    i16::from(on)
}

/// 1 male, 2 female, else 0: a number by its value, or text of the integer 1 or 2.
pub fn sex_model(value: &Value) -> i16 {
    let digits = |s: &str| {
        let s = s.trim();
        let s = s.strip_prefix('+').unwrap_or(s);
        let s = s.trim_start_matches('0');
        match s {
            "1" => 1,
            "2" => 2,
            _ => 0,
        }
    };
    match value {
        Value::Number(n) if n.as_f64() == Some(1.0) => 1,
        Value::Number(n) if n.as_f64() == Some(2.0) => 2,
        Value::String(s) => digits(s),
        _ => 0,
    }
}

fn name_ok(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::String(s) => s.trim().chars().count() <= 100,
        _ => false,
    }
}

/// The first rule the body breaks, in the spec's order, judged rule by rule here.
pub fn first_error(path: &str, body: &Map<String, Value>) -> Option<String> {
    let path_ok = path.trim().parse::<i64>() == Ok(CLIENT_ID);
    let broken = |key: &str, ok: &dyn Fn(&Value) -> bool| body.get(key).is_some_and(|v| !ok(v));
    if !path_ok || broken("client_id", &names_caller) {
        return Some(ProfileRefusal::NotTheCaller.to_string());
    }
    let same_phone = |v: &Value| {
        v.as_str()
            .is_some_and(|s| s.chars().filter(|c| !c.is_whitespace()).collect::<String>() == PHONE)
    };
    if broken("contact_phone", &same_phone) {
        return Some(ProfileRefusal::PhoneChanged.to_string());
    }
    for key in ["first_name", "last_name"] {
        if broken(key, &name_ok) {
            return Some(format!("{key} is invalid"));
        }
    }
    if broken("email_address", &|v| v.is_null() || v.is_string()) {
        return Some("email_address is invalid".to_owned());
    }
    if broken("birth_date", &|v| birth_date::parse(v).is_ok()) {
        return Some("birth_date is invalid".to_owned());
    }
    None
}

/// What a body that passes every rule changes.
pub fn expected_changes(body: &Map<String, Value>) -> ProfileChanges {
    let text = |key: &str| {
        body.get(key)
            .map(|v| v.as_str().map(|s| s.trim().to_owned()))
    };
    ProfileChanges {
        first_name: text("first_name"),
        last_name: text("last_name"),
        email_address: text("email_address"),
        birth_date: body
            .get("birth_date")
            .map(|v| birth_date::parse(v).ok().flatten()),
        sex: body.get("sex").map(sex_model),
        receive_offers: body.get("receive_offers").map(switch_model),
    }
}

/// `PUT /clients/{path}` with `body`: the first broken rule's message, or exactly the
/// changes the body asks for (names and email trimmed, null clears, switches 0 or 1, sex 0
/// to 2, an absent key left alone).
pub fn check_profile(path: &str, body: &Map<String, Value>) -> Result<(), String> {
    let answer = profile_update::profile_changes(path, body, &caller()).map_err(|r| r.to_string());
    let expected = match first_error(path, body) {
        Some(message) => Err(message),
        None => Ok(expected_changes(body)),
    };
    if answer != expected {
        return Err(format!(
            "path {path:?}, body {}: expected {expected:?}, got {answer:?}",
            Value::Object(body.clone())
        ));
    }
    if let Ok(changes) = &answer {
        for name in [&changes.first_name, &changes.last_name]
            .into_iter()
            .flatten()
            .flatten()
        {
            if name.trim() != name || name.chars().count() > 100 {
                return Err(format!("name {name:?} is not trimmed text of at most 100"));
            }
        }
    }
    Ok(())
}

/// `PUT /clients/setting` with `body`: client_id first, then push_enabled.
pub fn check_push(body: &Map<String, Value>) -> Result<(), String> {
    let answer = profile_update::push_setting(body, &caller()).map_err(|r| r.to_string());
    let expected = if !body.get("client_id").is_some_and(names_caller) {
        Err(SettingRefusal::NotTheCaller.to_string())
    } else {
        body.get("push_enabled")
            .map(switch_model)
            .ok_or_else(|| SettingRefusal::PushMissing.to_string())
    };
    if answer == expected {
        Ok(())
    } else {
        Err(format!(
            "body {}: expected {expected:?}, got {answer:?}",
            Value::Object(body.clone())
        ))
    }
}

/// The raw body as the routes read it: blank is `{}`, JSON that is not an object is `{}`,
/// text that is not JSON is refused with `Invalid JSON body: …`. Then both routes' checks.
pub fn check_raw(path: &str, raw: &[u8]) -> Result<(), String> {
    let read = profile_update::body_object(raw).map_err(|r| r.to_string());
    let json = serde_json::from_slice::<Value>(raw);
    let expected = if raw.iter().all(u8::is_ascii_whitespace) {
        Some(Map::new())
    } else {
        match json {
            Ok(Value::Object(map)) => Some(map),
            Ok(_) => Some(Map::new()),
            Err(_) => None,
        }
    };
    match (&read, expected) {
        (Ok(map), Some(expected)) if *map == expected => {}
        (Err(message), None) if message.starts_with("Invalid JSON body: ") => {}
        (read, expected) => {
            return Err(format!(
                "{}: expected {expected:?}, got {read:?}",
                String::from_utf8_lossy(raw)
            ));
        }
    }
    if let Ok(body) = read {
        check_profile(path, &body)?;
        check_push(&body)?;
    }
    Ok(())
}

/// One input of the fuzz target `profile_update`, checked exactly as the target checks it
/// (the target calls this; `main.rs` replays the target's seeds and corpus through it). The
/// first byte picks the path id: mostly the caller's own, one time in eight another; the
/// rest is the body.
pub fn check_fuzz_input(data: &[u8]) -> Result<(), String> {
    let (path, raw) = match data.split_first() {
        Some((b, rest)) if b % 8 == 0 => ("1002", rest),
        Some((_, rest)) => ("1001", rest),
        None => ("1001", data),
    };
    check_raw(path, raw)
}
