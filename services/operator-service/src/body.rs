//! The body of `POST /services` and `PATCH /services/{id}`: every field optional on PATCH;
//! `parentId` stripped first (a parent is set only through the children route); any other
//! unknown key refused, naming it.

use diesel::AsChangeset;
use serde_json::{Map, Value};

use catalog_db::schema::services;

const URL_MAX: usize = 2048;

/// The rules [`fields`] checks first, as the document lists them.
const FIRST_RULES: &str = "`body must be a JSON object` (no body, not JSON, or not an object); `property <key> should not exist` (any key not in the schema; `parentId` is stripped first, silently)";

/// The field-by-field rules of [`fields`], in its order, as the document lists them.
const FIELD_RULES: &str = "`title must be a string of 1 to 255 characters` (empty, blank or too long) or `title must be a string` (not a string, null included); `titleTranslated must be a string of 1 to 255 characters` or `titleTranslated must be a string`; `status must be one of the following values: active, hidden`; `logo must be a string of at most 2048 characters or null`; `hierarchyRole must be one of the following values: parent, standalone, child`; `image must be a string of at most 2048 characters or null`, `image_en must be a string of at most 2048 characters or null`, `thumbnail must be a string of at most 2048 characters or null`, `thumbnail_en must be a string of at most 2048 characters or null`, `url must be a string of at most 2048 characters or null`, `background_image_url must be a string of at most 2048 characters or null`; `serviceType must be a string of 1 to 50 characters` or `serviceType must be a string`";

/// The 400 of `POST /services`, in the order [`fields`] checks.
pub fn create_400() -> String {
    format!(
        "the first failing rule of the body, in this order: {FIRST_RULES}; `title should not be \
         empty` or `titleTranslated should not be empty` (the key is missing); `ordering must be \
         a non-negative integer`; then field by field: {FIELD_RULES}"
    )
}

/// The 400 of `PATCH /services/{id}`: the path id, then the rules of [`fields`] but the
/// two required titles.
pub fn update_400() -> String {
    format!(
        "{}; or the first failing rule of the body, in this order: {FIRST_RULES}; `ordering \
         must be a non-negative integer`; then field by field: {FIELD_RULES}",
        crate::handlers::BAD_ID_400
    )
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

fn text(body: &Map<String, Value>, key: &str, max: usize) -> Result<Option<String>, String> {
    match body.get(key) {
        None => Ok(None),
        Some(Value::String(s)) if !s.trim().is_empty() && s.chars().count() <= max => {
            Ok(Some(s.trim().to_owned()))
        }
        Some(Value::String(_)) => Err(format!("{key} must be a string of 1 to {max} characters")),
        Some(_) => Err(format!("{key} must be a string")),
    }
}

fn url(body: &Map<String, Value>, key: &str) -> Result<Option<Option<String>>, String> {
    match body.get(key) {
        None => Ok(None),
        Some(Value::Null) => Ok(Some(None)),
        Some(Value::String(s)) if s.chars().count() <= URL_MAX => {
            Ok(Some(Some(s.trim().to_owned())))
        }
        Some(_) => Err(format!(
            "{key} must be a string of at most {URL_MAX} characters or null"
        )),
    }
}

fn one_of(
    body: &Map<String, Value>,
    key: &str,
    allowed: &[&str],
) -> Result<Option<String>, String> {
    match body.get(key) {
        None => Ok(None),
        Some(Value::String(s)) if allowed.contains(&s.as_str()) => Ok(Some(s.clone())),
        Some(_) => Err(format!(
            "{key} must be one of the following values: {}",
            allowed.join(", ")
        )),
    }
}

/// Reads a body; `creating` makes the two titles required.
pub fn fields(body: &Value, creating: bool) -> Result<ServiceFields, String> {
    let Value::Object(body) = body else {
        return Err("body must be a JSON object".into());
    };
    let mut body = body.clone();
    body.remove("parentId");
    if let Some(unknown) = body.keys().find(|k| !KNOWN.contains(&k.as_str())) {
        return Err(format!("property {unknown} should not exist"));
    }
    if creating {
        for key in ["title", "titleTranslated"] {
            if !body.contains_key(key) {
                return Err(format!("{key} should not be empty"));
            }
        }
    }
    let ordering = match body.get("ordering") {
        None => None,
        Some(v) => Some(
            v.as_i64()
                .and_then(|n| i32::try_from(n).ok())
                .filter(|n| *n >= 0)
                .ok_or_else(|| "ordering must be a non-negative integer".to_owned())?,
        ),
    };
    Ok(ServiceFields {
        title: text(&body, "title", 255)?,
        title_translated: text(&body, "titleTranslated", 255)?,
        status: one_of(&body, "status", &["active", "hidden"])?,
        logo: match url(&body, "logo")? {
            Some(None) => Some(String::new()),
            other => other.flatten(),
        },
        logo_variants: body
            .get("logo_variants")
            .map(|v| Some(v.clone()).filter(|v| !v.is_null())),
        ordering,
        hierarchy_role: one_of(&body, "hierarchyRole", &["parent", "standalone", "child"])?,
        image: url(&body, "image")?,
        image_en: url(&body, "image_en")?,
        thumbnail: url(&body, "thumbnail")?,
        thumbnail_en: url(&body, "thumbnail_en")?,
        url: url(&body, "url")?,
        background_image_url: url(&body, "background_image_url")?,
        service_type: text(&body, "serviceType", 50)?,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn parent_id_is_stripped_before_unknown_keys_are_refused() {
        assert!(fields(&json!({"parentId": "5"}), false).is_ok());
        assert_eq!(
            fields(&json!({"parentId": 5, "colour": "red"}), false).unwrap_err(),
            "property colour should not exist"
        );
    }

    #[test]
    fn values_are_checked() {
        assert!(
            fields(&json!({"hierarchyRole": "root"}), false)
                .unwrap_err()
                .starts_with("hierarchyRole must be one of")
        );
        assert!(fields(&json!({"status": "deleted"}), false).is_err());
        assert!(fields(&json!({"ordering": -1}), false).is_err());
        assert!(fields(&json!({"title": ""}), false).is_err());
        assert_eq!(
            fields(&json!({}), true).unwrap_err(),
            "title should not be empty"
        );
        assert!(fields(&json!({"title": "a", "titleTranslated": "b"}), true).is_ok());
    }
}

/// The body as the document shows it (never deserialized: [`fields`] reads the raw JSON).
/// The body of `POST /services` (the two titles required) and `PATCH /services/{id}`
/// (every key optional; only the keys sent change). `parentId` is stripped first; any
/// other key not listed here is refused.
#[derive(utoipa::ToSchema)]
#[allow(dead_code)]
pub struct ServiceBody {
    /// Arabic name, 1 to 255 characters after trimming; required on create.
    #[schema(min_length = 1, max_length = 255, example = "برجر")]
    title: Option<String>,
    /// English name, 1 to 255 characters after trimming; required on create.
    #[schema(
        rename = "titleTranslated",
        min_length = 1,
        max_length = 255,
        example = "Burgers"
    )]
    title_translated: Option<String>,
    /// `active` (the default) or `hidden`.
    #[schema(pattern = "^(active|hidden)$", example = "active")]
    status: Option<String>,
    /// Text of at most 2048 characters, or null (stored as `""`, the default).
    logo: Option<String>,
    /// Any JSON, or null.
    logo_variants: Option<Value>,
    /// An integer ≥ 0 (default 0).
    #[schema(minimum = 0, example = 3)]
    ordering: Option<i32>,
    /// `parent` (the default on create), `standalone` or `child`. A parent leaving the
    /// role releases all its children (they stay `child`, unassigned); a child leaving it
    /// is detached; both in the same transaction, and the answer does not say so.
    #[schema(
        rename = "hierarchyRole",
        pattern = "^(parent|standalone|child)$",
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
        rename = "serviceType",
        min_length = 1,
        max_length = 50,
        example = "default"
    )]
    service_type: Option<String>,
}
