//! The bodies of the profile and push-setting routes, checked in the spec's order: the
//! first failing rule is the answer, and nothing is written unless all pass.

use chrono::NaiveDate;
use diesel::AsChangeset;
use serde_json::{Map, Value};

use crate::birth_date;
use crate::db::schema::clients;
use crate::profile::Profile;

/// Both routes' answer to a client_id that is not the caller's.
const NOT_THE_CALLER: &str = "client_id does not match the authenticated client";

envelope::refusals! {
    /// A body that is not JSON at all (no body, or JSON that is not an object, reads as
    /// `{}`: [`body_object`]).
    pub enum BodyRefusal in A {
        NotJson(reason: String) => 400, "Invalid JSON body: {reason}";
    }
}

envelope::refusals! {
    /// Why a profile update is refused: the first rule the body breaks, in the spec's order
    /// ([`profile_changes`]).
    pub enum ProfileRefusal in A {
        /// The path's client_id, or the body's, is not the caller's.
        NotTheCaller => 400, [NOT_THE_CALLER];
        /// contact_phone differs from the stored phone, whitespace aside.
        PhoneChanged => 400, "contact_phone cannot be changed";
        /// Not text of at most 100 characters after trimming, nor null.
        InvalidFirstName => 400, "first_name is invalid";
        InvalidLastName => 400, "last_name is invalid";
        /// Not text, nor null.
        InvalidEmail => 400, "email_address is invalid";
        /// Not a date ([`birth_date::parse`]), nor null.
        InvalidBirthDate => 400, "birth_date is invalid";
    }
}

envelope::refusals! {
    /// Why a push setting is refused ([`push_setting`]).
    pub enum SettingRefusal in A {
        /// client_id missing, or not the caller's (checked first).
        NotTheCaller => 400, [NOT_THE_CALLER];
        PushMissing => 400, "push_enabled is required";
    }
}

const NAME_MAX_CHARS: usize = 100;

/// The columns a profile update writes; `None` leaves a column alone, `Some(None)` clears it.
#[derive(Debug, Default, PartialEq, Eq, AsChangeset)]
#[diesel(table_name = clients)]
pub struct ProfileChanges {
    pub first_name: Option<Option<String>>,
    pub last_name: Option<Option<String>>,
    pub email_address: Option<Option<String>>,
    pub birth_date: Option<Option<NaiveDate>>,
    pub sex: Option<i16>,
    pub receive_offers: Option<i16>,
}

/// A request body as the routes read it: no body, or a JSON value that is not an object,
/// counts as an empty object. Text that is not JSON at all is refused.
pub fn body_object(body: &[u8]) -> Result<Map<String, Value>, BodyRefusal> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Map::new());
    }
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Ok(Map::new()),
        Err(e) => Err(BodyRefusal::NotJson(e.to_string())),
    }
}

/// True when `value` names `client_id`: the integer itself or a numeric string of it.
pub fn names_client(value: &Value, client_id: i64) -> bool {
    match value {
        Value::Number(n) => {
            n.as_i64() == Some(client_id)
                || n.as_f64()
                    .is_some_and(|f| f.fract() == 0.0 && f == client_id as f64)
        }
        Value::String(s) => s.trim().parse::<i64>().ok() == Some(client_id),
        _ => false,
    }
}

/// `1`, `"1"` and `true` mean on; anything else means off. A JSON number counts by its
/// value, as JavaScript reads it: `1.0` and `1e0` are 1 too.
pub fn switch(value: &Value) -> i16 {
    let on = matches!(value, Value::Bool(true))
        || value.as_f64() == Some(1.0)
        || value.as_str() == Some("1");
    i16::from(on)
}

/// A name: `None` absent, `Some(None)` cleared, else the trimmed text; `invalid` otherwise.
fn name(
    body: &Map<String, Value>,
    key: &str,
    invalid: ProfileRefusal,
) -> Result<Option<Option<String>>, ProfileRefusal> {
    match body.get(key) {
        None => Ok(None),
        Some(Value::Null) => Ok(Some(None)),
        Some(Value::String(s)) if s.trim().chars().count() <= NAME_MAX_CHARS => {
            Ok(Some(Some(s.trim().to_owned())))
        }
        Some(_) => Err(invalid),
    }
}

/// 1 male, 2 female; anything else is unknown (0). A JSON number counts by its value
/// (`2.0` is 2).
fn sex(value: &Value) -> i16 {
    let n = value.as_f64().or_else(|| {
        value
            .as_str()
            .and_then(|s| s.trim().parse::<i16>().ok())
            .map(f64::from)
    });
    if n == Some(1.0) {
        1
    } else if n == Some(2.0) {
        2
    } else {
        0
    }
}

/// `PUT /api/v1/clients/{client_id}`: checks client_id (path, then body), contact_phone,
/// first_name, last_name, email_address, birth_date, in that order.
pub fn profile_changes(
    path_client_id: &str,
    body: &Map<String, Value>,
    caller: &Profile,
) -> Result<ProfileChanges, ProfileRefusal> {
    if path_client_id.trim().parse::<i64>().ok() != Some(caller.client_id) {
        return Err(ProfileRefusal::NotTheCaller);
    }
    if body
        .get("client_id")
        .is_some_and(|value| !names_client(value, caller.client_id))
    {
        return Err(ProfileRefusal::NotTheCaller);
    }
    if let Some(value) = body.get("contact_phone") {
        let same = value
            .as_str()
            .is_some_and(|s| domain::Phone::strip_whitespace(s) == caller.contact_phone);
        if !same {
            return Err(ProfileRefusal::PhoneChanged);
        }
    }
    let first_name = name(body, "first_name", ProfileRefusal::InvalidFirstName)?;
    let last_name = name(body, "last_name", ProfileRefusal::InvalidLastName)?;
    let email_address = match body.get("email_address") {
        None => None,
        Some(Value::Null) => Some(None),
        Some(Value::String(s)) => Some(Some(s.trim().to_owned())),
        Some(_) => return Err(ProfileRefusal::InvalidEmail),
    };
    let birth_date = match body.get("birth_date") {
        None => None,
        Some(value) => {
            Some(birth_date::parse(value).map_err(|_| ProfileRefusal::InvalidBirthDate)?)
        }
    };
    Ok(ProfileChanges {
        first_name,
        last_name,
        email_address,
        birth_date,
        sex: body.get("sex").map(sex),
        receive_offers: body.get("receive_offers").map(switch),
    })
}

/// `PUT /api/v1/clients/setting`: client_id (required, first), then push_enabled.
pub fn push_setting(body: &Map<String, Value>, caller: &Profile) -> Result<i16, SettingRefusal> {
    if !body
        .get("client_id")
        .is_some_and(|v| names_client(v, caller.client_id))
    {
        return Err(SettingRefusal::NotTheCaller);
    }
    body.get("push_enabled")
        .map(switch)
        .ok_or(SettingRefusal::PushMissing)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn switches_are_on_only_for_1_string_1_and_true() {
        for on in [json!(1), json!("1"), json!(true)] {
            assert_eq!(switch(&on), 1, "{on}");
        }
        for off in [
            json!(0),
            json!(2),
            json!("true"),
            json!(null),
            json!("0"),
            json!(false),
            json!(1.5),
        ] {
            assert_eq!(switch(&off), 0, "{off}");
        }
    }

    #[test]
    fn client_id_may_be_an_integer_or_numeric_string() {
        assert!(names_client(&json!(1001), 1001));
        assert!(names_client(&json!("1001"), 1001));
        assert!(names_client(&json!(" 1001 "), 1001));
        for no in [
            json!(null),
            json!(1002),
            json!("abc"),
            json!(true),
            json!([1001]),
        ] {
            assert!(!names_client(&no, 1001), "{no}");
        }
    }

    #[test]
    fn bodies_that_are_not_objects_read_as_empty() {
        assert!(body_object(b"").unwrap().is_empty());
        assert!(body_object(b"[1,2]").unwrap().is_empty());
        assert!(body_object(b"null").unwrap().is_empty());
        assert!(body_object(b"{oops").is_err());
    }
}
