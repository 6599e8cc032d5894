//! Occasions: the labels a gift may carry. The back office lists them all, creates them (the
//! service assigns the 24-hex id), changes their labels and whether they are custom, and
//! withdraws them (inactive: no longer offered to the app nor accepted by a new order; the
//! orders that name one keep it, and a change may make it active again). The app's
//! `GET /point-occasions` lists the active ones from the same rows.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

use crate::body;

/// An occasion as the back office sees it, in this key order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OccasionRecord {
    /// 24 hex characters, lower case.
    pub id: String,
    /// The English label (the app's `occasion_en`).
    pub occasion_en: String,
    /// The Arabic label; null when there is none (the app then shows the English one).
    #[schema(required)]
    pub occasion_ar: Option<String>,
    /// A custom occasion (the app's `is_custom` 1).
    pub is_custom: bool,
    /// Offered to the app and accepted by new orders.
    pub active: bool,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// Every occasion, active or not.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct OccasionList {
    pub data: Vec<OccasionRecord>,
}

/// The body of a create. Labels are trimmed.
#[derive(ToSchema)]
#[schema(rename_all = "camelCase")]
#[allow(dead_code)] // the document's view: the body is read from its JSON by `OccasionFields::read`
pub struct OccasionCreateBody {
    /// 1 to 100 characters.
    #[schema(example = "Birthday")]
    occasion_en: String,
    /// 1 to 100 characters, or null (or absent) for none.
    #[schema(example = "عيد ميلاد")]
    occasion_ar: Option<String>,
    /// Default false.
    #[schema(nullable = false)]
    is_custom: Option<bool>,
    /// Default true.
    #[schema(nullable = false)]
    active: Option<bool>,
}

/// The body of a change: the keys sent, at least one (null only for `occasionAr`). Labels
/// are trimmed.
#[derive(ToSchema)]
#[schema(rename_all = "camelCase")]
#[allow(dead_code)] // the document's view: the body is read from its JSON by `OccasionFields::read`
pub struct OccasionChangeBody {
    /// 1 to 100 characters.
    #[schema(example = "Birthday", nullable = false)]
    occasion_en: Option<String>,
    /// 1 to 100 characters, or null for none.
    #[schema(example = "عيد ميلاد")]
    occasion_ar: Option<String>,
    #[schema(nullable = false)]
    is_custom: Option<bool>,
    /// `true` offers a withdrawn occasion again.
    #[schema(nullable = false)]
    active: Option<bool>,
}

/// The keys of an occasion's body, in the order they are checked.
pub const KEYS: [&str; 4] = ["occasionEn", "occasionAr", "isCustom", "active"];

/// The longest label.
pub const MAX_LABEL: usize = 100;

envelope::refusals! {
    /// Why an occasion's change is refused, checked in this order: the body (its form, then
    /// each key in [`KEYS`]' order, then the key a create needs), then the occasion.
    pub enum OccasionRefusal in BackOffice {
        NotAnObject => 400 "NOT_AN_OBJECT", [body::NOT_AN_OBJECT];
        UnknownKey(key: String) => 400 "UNKNOWN_FIELD", "{key} is not a field of an occasion";
        NothingToChange => 400 "NOTHING_TO_CHANGE", "the body names no field of an occasion to change";
        BadEnglish => 400 "INVALID_OCCASION_EN", "occasionEn must be text of 1 to 100 characters";
        BadArabic => 400 "INVALID_OCCASION_AR", "occasionAr must be text of 1 to 100 characters or null";
        BadCustom => 400 "INVALID_IS_CUSTOM", "isCustom must be true or false";
        BadActive => 400 "INVALID_ACTIVE", "active must be true or false for an occasion";
        NoEnglish => 400 "FIELD_REQUIRED", "occasionEn is required for an occasion";
        UnknownOccasion(id: String) => 404 "OCCASION_NOT_FOUND", "occasion {id} not found";
    }
}

/// What a body sets; `None` leaves a value as it is (on create, its default).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OccasionFields {
    pub occasion_en: Option<String>,
    pub occasion_ar: Option<Option<String>>,
    pub is_custom: Option<bool>,
    pub active: Option<bool>,
}

impl OccasionFields {
    /// Reads a create's body (`create`) or a change's.
    pub fn read(body: &Value, create: bool) -> Result<OccasionFields, OccasionRefusal> {
        let map = body::object(
            body,
            &KEYS,
            OccasionRefusal::NotAnObject,
            OccasionRefusal::UnknownKey,
        )?;
        if !create && map.is_empty() {
            return Err(OccasionRefusal::NothingToChange);
        }
        let mut fields = OccasionFields::default();
        if let Some(value) = map.get("occasionEn") {
            fields.occasion_en =
                Some(body::text(value, MAX_LABEL).ok_or(OccasionRefusal::BadEnglish)?);
        }
        if let Some(value) = map.get("occasionAr") {
            fields.occasion_ar = Some(match value {
                Value::Null => None,
                value => Some(body::text(value, MAX_LABEL).ok_or(OccasionRefusal::BadArabic)?),
            });
        }
        if let Some(value) = map.get("isCustom") {
            fields.is_custom = Some(value.as_bool().ok_or(OccasionRefusal::BadCustom)?);
        }
        if let Some(value) = map.get("active") {
            fields.active = Some(value.as_bool().ok_or(OccasionRefusal::BadActive)?);
        }
        if create && fields.occasion_en.is_none() {
            return Err(OccasionRefusal::NoEnglish);
        }
        Ok(fields)
    }
}

impl crate::audit::Audited for OccasionRecord {
    fn subject(&self) -> String {
        format!("occasion:{}", self.id)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn each_refusal_in_its_order() {
        use OccasionRefusal::*;
        let cases = [
            (json!(1), true, NotAnObject),
            (
                json!({"occasionEn": 1, "label": "x"}),
                true,
                UnknownKey("label".into()),
            ),
            (json!({}), false, NothingToChange),
            (
                json!({"occasionEn": " ", "occasionAr": 1}),
                true,
                BadEnglish,
            ),
            (json!({"occasionEn": "x".repeat(101)}), true, BadEnglish),
            (json!({"occasionAr": "", "isCustom": 1}), true, BadArabic),
            (json!({"isCustom": 1, "active": 1}), true, BadCustom),
            (json!({"active": 1}), false, BadActive),
            (json!({"occasionAr": null}), true, NoEnglish),
        ];
        for (body, create, refusal) in cases {
            assert_eq!(OccasionFields::read(&body, create), Err(refusal), "{body}");
        }
        assert_eq!(
            OccasionFields::read(&json!({"occasionEn": " Eid ", "occasionAr": null}), true),
            Ok(OccasionFields {
                occasion_en: Some("Eid".into()),
                occasion_ar: Some(None),
                is_custom: None,
                active: None,
            })
        );
    }
}
