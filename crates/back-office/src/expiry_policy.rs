//! The expiry policy: whether points expire (`never`, or after `inactivityDays` without an
//! earn), as the balance's `pointsExpirationDate` and the nightly expiry run read it. Read
//! and replaced whole, each replacement a new version: a replacement names the version it
//! was made from, so that of two operators editing at once the second is refused rather
//! than silently undoing the first.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

use crate::body;

/// The policy, in this key order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExpiryPolicy {
    /// `never` or `inactivity`.
    #[schema(value_type = ExpiryRule)]
    pub expiry: String,
    /// With `inactivity`: the days after a client's newest earn on which its points expire;
    /// null with `never`.
    #[schema(required)]
    pub inactivity_days: Option<i32>,
    /// 0 while no policy was ever set (points never expire); each replacement takes a
    /// higher one.
    pub version: i32,
    /// When it was last set; null while it never was.
    #[schema(required)]
    pub updated_at: Option<DateTime<Utc>>,
}

/// Whether points expire.
#[derive(ToSchema)]
#[schema(rename_all = "lowercase")]
#[allow(dead_code)] // the document's closed set; the policy carries it as text
pub enum ExpiryRule {
    Never,
    Inactivity,
}

/// The body of a replacement: every key required (`inactivityDays` null with `never`).
#[derive(ToSchema)]
#[schema(rename_all = "camelCase")]
#[allow(dead_code)] // the document's view: the body is read from its JSON by `ExpiryChange::read`
pub struct ExpiryPolicyBody {
    #[schema(value_type = ExpiryRule)]
    expiry: String,
    /// 1 to 36500 with `inactivity`; null with `never`.
    #[schema(required)]
    inactivity_days: Option<i32>,
    /// The version the change was made from (the one read).
    version: i32,
}

/// The keys of a replacement's body, in the order they are checked.
pub const KEYS: [&str; 3] = ["expiry", "inactivityDays", "version"];

/// The longest inactivity, in days: a hundred years.
pub const MAX_DAYS: i64 = 36_500;

envelope::refusals! {
    /// Why a replacement is refused, checked in this order: the body (its form, then each
    /// key in [`KEYS`]' order), then the version, then (an admin's) a shorter window.
    pub enum ExpiryPolicyRefusal in BackOffice {
        NotAnObject => 400 "NOT_AN_OBJECT", [body::NOT_AN_OBJECT];
        UnknownKey(key: String) => 400 "UNKNOWN_FIELD", "{key} is not a field of the expiry policy";
        BadExpiry => 400 "INVALID_EXPIRY", "expiry must be never or inactivity";
        BadDays => 400 "INVALID_INACTIVITY_DAYS",
            "inactivityDays must be an integer from 1 to 36500 with inactivity, and null with never";
        BadVersion => 400 "INVALID_VERSION", "version must be the integer version the change was made from";
        Stale(sent: i32, current: i32) => 409 "STALE_VERSION",
            "the expiry policy is at version {current}, not {sent}: read it again and make the change on it";
        /// A window where there was none, or a shorter one, takes clients' points sooner:
        /// an admin's is refused; a super_admin may ([`ExpiryChange::shortens`]).
        Shortens(days: i32, before: String) => 403 "EXPIRY_SHORTENING_NEEDS_SUPER_ADMIN",
            "inactivityDays {days} takes points sooner than the policy now ({before}): only a \
             super_admin may set it";
    }
}

/// A replacement, read.
#[derive(Debug, Clone, PartialEq)]
pub struct ExpiryChange {
    pub expiry: &'static str,
    pub inactivity_days: Option<i32>,
    pub version: i32,
}

impl ExpiryChange {
    /// The refusal to an admin of a change that takes points sooner than `before` would: a
    /// window where there was none, or a shorter one (`None`: it does not).
    pub fn shortens(&self, before: &ExpiryPolicy) -> Option<ExpiryPolicyRefusal> {
        let days = self.inactivity_days?;
        match before.inactivity_days {
            None => Some(ExpiryPolicyRefusal::Shortens(
                days,
                "points never expire".to_owned(),
            )),
            Some(old) if days < old => {
                Some(ExpiryPolicyRefusal::Shortens(days, format!("{old} days")))
            }
            Some(_) => None,
        }
    }

    pub fn read(body: &Value) -> Result<ExpiryChange, ExpiryPolicyRefusal> {
        let Value::Object(map) = body else {
            return Err(ExpiryPolicyRefusal::NotAnObject);
        };
        if let Some(key) = map.keys().find(|key| !KEYS.contains(&key.as_str())) {
            return Err(ExpiryPolicyRefusal::UnknownKey(key.clone()));
        }
        let expiry = match map.get("expiry").and_then(Value::as_str) {
            Some("never") => "never",
            Some("inactivity") => "inactivity",
            _ => return Err(ExpiryPolicyRefusal::BadExpiry),
        };
        let days = map
            .get("inactivityDays")
            .ok_or(ExpiryPolicyRefusal::BadDays)?;
        let inactivity_days = match (expiry, days) {
            ("never", Value::Null) => None,
            ("inactivity", days) => Some(
                days.as_i64()
                    .filter(|d| (1..=MAX_DAYS).contains(d))
                    .and_then(|d| i32::try_from(d).ok())
                    .ok_or(ExpiryPolicyRefusal::BadDays)?,
            ),
            _ => return Err(ExpiryPolicyRefusal::BadDays),
        };
        let version = map
            .get("version")
            .and_then(Value::as_i64)
            .and_then(|v| i32::try_from(v).ok())
            .filter(|v| *v >= 0)
            .ok_or(ExpiryPolicyRefusal::BadVersion)?;
        Ok(ExpiryChange {
            expiry,
            inactivity_days,
            version,
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_window_where_there_was_none_or_a_shorter_one_shortens() {
        let policy = |days: Option<i32>| ExpiryPolicy {
            expiry: if days.is_some() {
                "inactivity"
            } else {
                "never"
            }
            .to_owned(),
            inactivity_days: days,
            version: 3,
            updated_at: None,
        };
        let change = |days: Option<i32>| ExpiryChange {
            expiry: if days.is_some() {
                "inactivity"
            } else {
                "never"
            },
            inactivity_days: days,
            version: 3,
        };
        let shortens = |to, from| change(to).shortens(&policy(from)).is_some();
        assert!(shortens(Some(3650), None));
        assert!(shortens(Some(364), Some(365)));
        assert!(shortens(Some(1), Some(365)));
        assert!(!shortens(Some(365), Some(365)));
        assert!(!shortens(Some(366), Some(365)));
        assert!(!shortens(None, Some(1)));
        assert_eq!(
            change(Some(1)).shortens(&policy(Some(365))),
            Some(ExpiryPolicyRefusal::Shortens(1, "365 days".to_owned()))
        );
    }

    #[test]
    fn each_refusal_in_its_order() {
        use ExpiryPolicyRefusal::*;
        let cases = [
            (json!("never"), NotAnObject),
            (json!({"expiry": "x", "days": 1}), UnknownKey("days".into())),
            (json!({"expiry": "Never"}), BadExpiry),
            (json!({"expiry": "never", "inactivityDays": 30}), BadDays),
            (
                json!({"expiry": "inactivity", "inactivityDays": 0}),
                BadDays,
            ),
            (
                json!({"expiry": "inactivity", "inactivityDays": 36501}),
                BadDays,
            ),
            (
                json!({"expiry": "inactivity", "inactivityDays": 1.5}),
                BadDays,
            ),
            (
                json!({"expiry": "inactivity", "inactivityDays": 30}),
                BadVersion,
            ),
            (
                json!({"expiry": "never", "inactivityDays": null, "version": -1}),
                BadVersion,
            ),
        ];
        for (body, refusal) in cases {
            assert_eq!(ExpiryChange::read(&body), Err(refusal), "{body}");
        }
        assert_eq!(
            ExpiryChange::read(
                &json!({"expiry": "inactivity", "inactivityDays": 30, "version": 2})
            ),
            Ok(ExpiryChange {
                expiry: "inactivity",
                inactivity_days: Some(30),
                version: 2
            })
        );
        assert_eq!(
            ExpiryChange::read(&json!({"expiry": "never", "version": 0})),
            Err(BadDays)
        );
        assert_eq!(
            ExpiryChange::read(&json!({"expiry": "never", "inactivityDays": null, "version": 0})),
            Ok(ExpiryChange {
                expiry: "never",
                inactivity_days: None,
                version: 0
            })
        );
    }
}
