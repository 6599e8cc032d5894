//! The expiry policy: whether points expire (`never`, or after `inactivityDays` without an
//! earn), as the balance's `pointsExpirationDate` and the nightly expiry run read it. Read
//! and replaced whole, each replacement a new version: a replacement names the version it
//! was made from, so that of two operators editing at once the second is refused rather
//! than silently undoing the first. A replacement that takes points sooner is a
//! super_admin's, and one that would take points in the next expiry run is made only with the
//! figures of its dry run (`confirm`), so that nobody's points go by surprise.

use bigdecimal::BigDecimal;
use chrono::{DateTime, NaiveDate, Utc};
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
    /// The figures of the change's dry run, which a change that takes points in the next
    /// expiry run must send back as they are; any other change may leave it out.
    confirm: Option<ExpiryConfirmation>,
}

/// A dry run's figures, as a replacement confirms them.
#[derive(ToSchema)]
#[allow(dead_code)] // the document's view: read by `ExpiryChange::read`
pub struct ExpiryConfirmation {
    /// [`ExpiryDryRun::clients`].
    clients: i64,
    /// [`ExpiryDryRun::points`].
    #[schema(example = "3400.5")]
    points: String,
}

/// What the next expiry run would take if the policy were the one sent, in this key order.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExpiryDryRun {
    /// The Riyadh date of the next run counted: tomorrow's, which takes every date that has
    /// passed by then (today's run, if it is yet to come, takes no more).
    pub as_of: NaiveDate,
    /// The clients whose whole balance it would take.
    pub clients: i64,
    /// The points it would take, decimal text.
    #[schema(example = "3400.5")]
    pub points: String,
}

/// The keys of a replacement's body, in the order they are checked.
pub const KEYS: [&str; 4] = ["expiry", "inactivityDays", "version", "confirm"];

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
        BadConfirm => 400 "INVALID_CONFIRM",
            "confirm must be clients and points: the figures of the change's dry run";
        /// The change would take points in the next expiry run and `confirm` is not its dry
        /// run's figures (none sent, or those of another moment): nothing is changed.
        NotConfirmed(clients: i64, points: String) => 409 "EXPIRY_NOT_CONFIRMED",
            "under this policy the next expiry run would take {points} points from {clients} \
             clients: send its dry run's figures as confirm to make it";
    }
}

/// A replacement, read.
#[derive(Debug, Clone, PartialEq)]
pub struct ExpiryChange {
    pub expiry: &'static str,
    pub inactivity_days: Option<i32>,
    pub version: i32,
    /// The dry run's figures it confirms: clients and points.
    pub confirm: Option<(i64, BigDecimal)>,
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
        let map = body::object(
            body,
            &KEYS,
            ExpiryPolicyRefusal::NotAnObject,
            ExpiryPolicyRefusal::UnknownKey,
        )?;
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
        let confirm = match map.get("confirm") {
            None | Some(Value::Null) => None,
            Some(confirm) => Some(confirmation(confirm).ok_or(ExpiryPolicyRefusal::BadConfirm)?),
        };
        Ok(ExpiryChange {
            expiry,
            inactivity_days,
            version,
            confirm,
        })
    }

    /// `NotConfirmed` unless the change confirms `run`'s figures, or `run` takes nothing.
    pub fn confirms(&self, run: &ExpiryDryRun) -> Result<(), ExpiryPolicyRefusal> {
        let points: BigDecimal = run.points.parse().unwrap_or_default();
        match &self.confirm {
            _ if run.clients == 0 => Ok(()),
            Some((clients, confirmed)) if *clients == run.clients && *confirmed == points => Ok(()),
            _ => Err(ExpiryPolicyRefusal::NotConfirmed(
                run.clients,
                run.points.clone(),
            )),
        }
    }
}

/// `{clients, points}`: a count and a decimal, no other key.
fn confirmation(confirm: &Value) -> Option<(i64, BigDecimal)> {
    let Value::Object(map) = confirm else {
        return None;
    };
    if map.keys().any(|key| key != "clients" && key != "points") {
        return None;
    }
    let clients = map.get("clients")?.as_i64().filter(|c| *c >= 0)?;
    let points = match map.get("points")? {
        Value::String(text) => text.parse::<domain::Points>().ok(),
        Value::Number(number) => number.to_string().parse::<domain::Points>().ok(),
        _ => None,
    }?;
    Some((clients, points.into_decimal()))
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
            confirm: None,
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
                version: 2,
                confirm: None
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
                version: 0,
                confirm: None
            })
        );
    }

    #[test]
    fn a_change_that_takes_points_is_made_only_with_its_dry_runs_figures() {
        use ExpiryPolicyRefusal::*;
        let body = |confirm: Value| {
            let mut body = json!({"expiry": "inactivity", "inactivityDays": 30, "version": 2});
            body["confirm"] = confirm;
            body
        };
        let read = |confirm| ExpiryChange::read(&body(confirm));
        for bad in [
            json!("yes"),
            json!({"clients": 2}),
            json!({"clients": -1, "points": "5"}),
            json!({"clients": 2, "points": "x"}),
            json!({"clients": 2, "points": "5", "at": 1}),
        ] {
            assert_eq!(read(bad.clone()), Err(BadConfirm), "{bad}");
        }
        let run = ExpiryDryRun {
            as_of: NaiveDate::from_ymd_opt(2026, 12, 8).unwrap(),
            clients: 2,
            points: "200.5".to_owned(),
        };
        let refused = Err(NotConfirmed(2, "200.5".to_owned()));
        assert_eq!(read(Value::Null).unwrap().confirms(&run), refused);
        assert_eq!(
            read(json!({"clients": 2, "points": "200.4"}))
                .unwrap()
                .confirms(&run),
            refused
        );
        assert_eq!(
            read(json!({"clients": 3, "points": "200.5"}))
                .unwrap()
                .confirms(&run),
            refused
        );
        for same in [json!("200.50"), json!("200.5"), json!(200.5)] {
            let confirm = json!({"clients": 2, "points": same});
            assert_eq!(read(confirm).unwrap().confirms(&run), Ok(()), "{same}");
        }
        let nothing = ExpiryDryRun {
            clients: 0,
            points: "0".to_owned(),
            ..run
        };
        assert_eq!(read(Value::Null).unwrap().confirms(&nothing), Ok(()));
    }
}
