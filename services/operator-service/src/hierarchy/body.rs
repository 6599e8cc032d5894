//! The body of `POST /services` and `PATCH /services/{id}`: every field optional on PATCH;
//! `parentId` stripped first (a parent is set only through the children route); any other
//! unknown key refused, naming it.

use std::fmt;

use diesel::AsChangeset;
use serde_json::{Map, Value};

use catalog_db::schema::services;

use crate::error::quoted;
use crate::hierarchy::lookup::ServiceRefusal;

const URL_MAX: usize = 2048;

/// The values a field admits, as a refusal lists them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Choices(&'static [&'static str]);

impl fmt::Display for Choices {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.join(", "))
    }
}

envelope::refusals! {
    /// Why a service body is refused: the first rule it breaks, in the order [`fields`]
    /// checks them.
    pub enum BodyRefusal in Operator {
        /// No body, not JSON, or not an object.
        NotAnObject => 400, "body must be a JSON object";
        /// A key not in the schema (`parentId` is stripped first, silently).
        UnknownKey(key: String) => 400, "property {key} should not exist";
        /// A required title missing on create.
        Missing(key: &'static str) => 400, "{key} should not be empty";
        /// `ordering` that is not an integer ≥ 0.
        BadOrdering => 400, "ordering must be a non-negative integer";
        /// Text that is empty, blank or too long.
        BadLength(key: &'static str, max: usize) =>
            400, "{key} must be a string of 1 to {max} characters";
        /// Text that is not a string, null included.
        NotText(key: &'static str) => 400, "{key} must be a string";
        /// A URL that is not a string or null, or too long.
        BadUrl(key: &'static str, max: usize) =>
            400, "{key} must be a string of at most {max} characters or null";
        /// A value outside the field's choices.
        NotOneOf(key: &'static str, values: Choices) =>
            400, "{key} must be one of the following values: {values}";
    }
}

/// What a checked field admits.
#[derive(Debug, Clone, Copy)]
enum Rule {
    /// Text of 1 to `max` characters after trimming.
    Text(usize),
    /// Text of at most [`URL_MAX`] characters, or null.
    Url,
    /// One of the choices.
    OneOf(Choices),
}

/// A field [`fields`] checks, and its rule.
#[derive(Debug, Clone, Copy)]
struct Field {
    key: &'static str,
    rule: Rule,
}

const fn field(key: &'static str, rule: Rule) -> Field {
    Field { key, rule }
}

const TITLE: Field = field("title", Rule::Text(255));
const TITLE_TRANSLATED: Field = field("titleTranslated", Rule::Text(255));
const STATUS: Field = field("status", Rule::OneOf(Choices(&["active", "hidden"])));
const LOGO: Field = field("logo", Rule::Url);
const HIERARCHY_ROLE: Field = field(
    "hierarchyRole",
    Rule::OneOf(Choices(&["parent", "standalone", "child"])),
);
const IMAGE: Field = field("image", Rule::Url);
const IMAGE_EN: Field = field("image_en", Rule::Url);
const THUMBNAIL: Field = field("thumbnail", Rule::Url);
const THUMBNAIL_EN: Field = field("thumbnail_en", Rule::Url);
const URL: Field = field("url", Rule::Url);
const BACKGROUND_IMAGE_URL: Field = field("background_image_url", Rule::Url);
const SERVICE_TYPE: Field = field("serviceType", Rule::Text(50));

/// The checked fields, in the order [`fields`] checks them.
const CHECKED: [Field; 12] = [
    TITLE,
    TITLE_TRANSLATED,
    STATUS,
    LOGO,
    HIERARCHY_ROLE,
    IMAGE,
    IMAGE_EN,
    THUMBNAIL,
    THUMBNAIL_EN,
    URL,
    BACKGROUND_IMAGE_URL,
    SERVICE_TYPE,
];

/// The keys a create must send.
const REQUIRED: [&str; 2] = ["title", "titleTranslated"];

impl Field {
    /// The value sent: `None` when the key is absent, `Some(None)` when a URL is null.
    fn read(self, body: &Map<String, Value>) -> Result<Option<Option<String>>, BodyRefusal> {
        let Some(value) = body.get(self.key) else {
            return Ok(None);
        };
        let key = self.key;
        match (self.rule, value) {
            (Rule::Text(max), Value::String(s))
                if !s.trim().is_empty() && s.chars().count() <= max =>
            {
                Ok(Some(Some(s.trim().to_owned())))
            }
            (Rule::Text(max), Value::String(_)) => Err(BodyRefusal::BadLength(key, max)),
            (Rule::Text(_), _) => Err(BodyRefusal::NotText(key)),
            (Rule::Url, Value::Null) => Ok(Some(None)),
            (Rule::Url, Value::String(s)) if s.chars().count() <= URL_MAX => {
                Ok(Some(Some(s.trim().to_owned())))
            }
            (Rule::Url, _) => Err(BodyRefusal::BadUrl(key, URL_MAX)),
            (Rule::OneOf(choices), Value::String(s)) if choices.0.contains(&s.as_str()) => {
                Ok(Some(Some(s.clone())))
            }
            (Rule::OneOf(choices), _) => Err(BodyRefusal::NotOneOf(key, choices)),
        }
    }

    /// What the rule refuses, as the document lists it.
    fn refusals(self) -> Vec<BodyRefusal> {
        match self.rule {
            Rule::Text(max) => vec![
                BodyRefusal::BadLength(self.key, max),
                BodyRefusal::NotText(self.key),
            ],
            Rule::Url => vec![BodyRefusal::BadUrl(self.key, URL_MAX)],
            Rule::OneOf(choices) => vec![BodyRefusal::NotOneOf(self.key, choices)],
        }
    }
}

/// The rules [`fields`] checks first, as the document lists them.
fn first_rules() -> String {
    format!(
        "`{}` (no body, not JSON, or not an object); `{}` (any key not in the schema; \
         `parentId` is stripped first, silently)",
        BodyRefusal::NotAnObject,
        BodyRefusal::UnknownKey("<key>".to_owned()),
    )
}

/// The field-by-field rules of [`fields`], in its order, as the document lists them.
fn field_rules() -> String {
    let rules: Vec<String> = CHECKED
        .iter()
        .map(|field| quoted(field.refusals(), " or "))
        .collect();
    format!(
        "{} (a text that is empty, blank or too long breaks its length rule, any other value, \
         null included, its string rule)",
        rules.join("; ")
    )
}

envelope::answer_set! {
    /// The 400 of `POST /services`, in the order [`fields`] checks.
    pub CreateBadRequest, envelope::Envelope::Operator, {
        "400" => format!(
            "the first failing rule of the body, in this order: {}; {} (the key is missing); `{}`; \
             then field by field: {}",
            first_rules(),
            quoted(REQUIRED.map(BodyRefusal::Missing), " or "),
            BodyRefusal::BadOrdering,
            field_rules(),
        ),
    }
}

envelope::answer_set! {
    /// The 400 of `PATCH /services/{id}`: the path id, then the rules of [`fields`] but the
    /// two required titles.
    pub UpdateBadRequest, envelope::Envelope::Operator, {
        "400" => format!(
            "`{}`: the path id is not an integer; or the first failing rule of the body, in this \
             order: {}; `{}`; then field by field: {}",
            ServiceRefusal::BadId,
            first_rules(),
            BodyRefusal::BadOrdering,
            field_rules(),
        ),
    }
}

#[derive(Debug, Default, Clone, AsChangeset)]
#[diesel(table_name = services)]
pub struct ServiceFields {
    pub title: Option<String>,
    pub title_translated: Option<String>,
    pub status: Option<String>,
    pub logo: Option<String>,
    pub logo_variants: Option<Option<Value>>,
    pub ordering: Option<i32>,
    pub hierarchy_role: Option<String>,
    pub image: Option<Option<String>>,
    pub image_en: Option<Option<String>>,
    pub thumbnail: Option<Option<String>>,
    pub thumbnail_en: Option<Option<String>>,
    pub url: Option<Option<String>>,
    pub background_image_url: Option<Option<String>>,
    pub service_type: Option<String>,
}

const KNOWN: [&str; 14] = [
    "title",
    "titleTranslated",
    "status",
    "logo",
    "logo_variants",
    "ordering",
    "hierarchyRole",
    "image",
    "image_en",
    "thumbnail",
    "thumbnail_en",
    "url",
    "background_image_url",
    "serviceType",
];

/// Reads a body; `creating` makes the two titles required.
pub fn fields(body: &Value, creating: bool) -> Result<ServiceFields, BodyRefusal> {
    let Value::Object(body) = body else {
        return Err(BodyRefusal::NotAnObject);
    };
    let mut body = body.clone();
    body.remove("parentId");
    if let Some(unknown) = body.keys().find(|k| !KNOWN.contains(&k.as_str())) {
        return Err(BodyRefusal::UnknownKey(unknown.clone()));
    }
    if creating && let Some(missing) = REQUIRED.into_iter().find(|key| !body.contains_key(*key)) {
        return Err(BodyRefusal::Missing(missing));
    }
    let ordering = match body.get("ordering") {
        None => None,
        Some(v) => Some(
            v.as_i64()
                .and_then(|n| i32::try_from(n).ok())
                .filter(|n| *n >= 0)
                .ok_or(BodyRefusal::BadOrdering)?,
        ),
    };
    // In the order of `CHECKED`: the first field that breaks its rule is the answer.
    Ok(ServiceFields {
        title: TITLE.read(&body)?.flatten(),
        title_translated: TITLE_TRANSLATED.read(&body)?.flatten(),
        status: STATUS.read(&body)?.flatten(),
        // A null logo is stored as "".
        logo: LOGO.read(&body)?.map(Option::unwrap_or_default),
        logo_variants: body
            .get("logo_variants")
            .map(|v| Some(v.clone()).filter(|v| !v.is_null())),
        ordering,
        hierarchy_role: HIERARCHY_ROLE.read(&body)?.flatten(),
        image: IMAGE.read(&body)?,
        image_en: IMAGE_EN.read(&body)?,
        thumbnail: THUMBNAIL.read(&body)?,
        thumbnail_en: THUMBNAIL_EN.read(&body)?,
        url: URL.read(&body)?,
        background_image_url: BACKGROUND_IMAGE_URL.read(&body)?,
        service_type: SERVICE_TYPE.read(&body)?.flatten(),
    })
}

/// The body as the document shows it (never deserialized: [`fields`] reads the raw JSON).
/// The body of `POST /services` (the two titles required) and `PATCH /services/{id}`
/// (every key optional; only the keys sent change). `parentId` is stripped first; any
/// other key not listed here is refused.
#[derive(utoipa::ToSchema)]
#[allow(dead_code)]
pub struct ServiceBody {
    /// Arabic name, 1 to 255 characters after trimming; required on create.
    #[schema(nullable = false, min_length = 1, max_length = 255, example = "برجر")]
    title: Option<String>,
    /// English name, 1 to 255 characters after trimming; required on create.
    #[schema(
        nullable = false,
        rename = "titleTranslated",
        min_length = 1,
        max_length = 255,
        example = "Burgers"
    )]
    title_translated: Option<String>,
    /// `active` (the default) or `hidden`.
    #[schema(
        nullable = false,
        value_type = Option<crate::hierarchy::service_schemas::ServiceStatus>,
        example = "active"
    )]
    status: Option<String>,
    /// Text of at most 2048 characters, or null (stored as `""`, the default).
    logo: Option<String>,
    /// Any JSON, or null.
    logo_variants: Option<Value>,
    /// An integer ≥ 0 (default 0).
    #[schema(nullable = false, minimum = 0, example = 3)]
    ordering: Option<i32>,
    /// `parent` (the default on create), `standalone` or `child`. A parent leaving the
    /// role releases all its children (they stay `child`, unassigned); a child leaving it
    /// is detached; both in the same transaction, and the answer does not say so.
    #[schema(
        nullable = false,
        rename = "hierarchyRole",
        value_type = Option<crate::hierarchy::service_schemas::HierarchyRole>,
        example = "child"
    )]
    hierarchy_role: Option<String>,
    /// Text of at most 2048 characters, or null.
    image: Option<String>,
    image_en: Option<String>,
    thumbnail: Option<String>,
    thumbnail_en: Option<String>,
    url: Option<String>,
    background_image_url: Option<String>,
    /// 1 to 50 characters after trimming (default `default`).
    #[schema(
        nullable = false,
        rename = "serviceType",
        min_length = 1,
        max_length = 50,
        example = "default"
    )]
    service_type: Option<String>,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn parent_id_is_stripped_before_unknown_keys_are_refused() {
        assert!(fields(&json!({"parentId": "5"}), false).is_ok());
        assert_eq!(
            fields(&json!({"parentId": 5, "colour": "red"}), false)
                .unwrap_err()
                .to_string(),
            "property colour should not exist"
        );
    }

    #[test]
    fn values_are_checked() {
        assert!(
            fields(&json!({"hierarchyRole": "root"}), false)
                .unwrap_err()
                .to_string()
                .starts_with("hierarchyRole must be one of")
        );
        assert!(fields(&json!({"status": "deleted"}), false).is_err());
        assert!(fields(&json!({"ordering": -1}), false).is_err());
        assert!(fields(&json!({"title": ""}), false).is_err());
        assert_eq!(
            fields(&json!({}), true).unwrap_err().to_string(),
            "title should not be empty"
        );
        assert!(fields(&json!({"title": "a", "titleTranslated": "b"}), true).is_ok());
    }

    /// The document lists the fields in `CHECKED`'s order: it is the order they are checked.
    #[test]
    fn fields_are_checked_in_the_listed_order() {
        let mut body: Map<String, Value> = CHECKED
            .iter()
            .map(|field| (field.key.to_owned(), json!(5)))
            .collect();
        for field in CHECKED {
            let refused = fields(&Value::Object(body.clone()), false).unwrap_err();
            assert!(
                field.refusals().contains(&refused),
                "{}: {refused}",
                field.key
            );
            body.remove(field.key);
        }
        assert!(fields(&Value::Object(body), false).is_ok());
    }
}
