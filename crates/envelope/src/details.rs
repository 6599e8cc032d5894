//! The `details` of a body that failed validation: `formErrors` for problems with the body
//! as a whole and `fieldErrors` for each field, in the order the checks found them.

use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{ArrayBuilder, ObjectBuilder, Schema, Type};

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Details {
    form_errors: Vec<String>,
    field_errors: Vec<(String, Vec<String>)>,
}

impl Details {
    pub fn new() -> Self {
        Self::default()
    }

    /// A problem with the body as a whole, e.g. `Expected object, received null`.
    pub fn form_error(mut self, message: impl Into<String>) -> Self {
        self.form_errors.push(message.into());
        self
    }

    /// A problem with one field; several messages for one field stay together.
    pub fn field_error(mut self, field: impl Into<String>, message: impl Into<String>) -> Self {
        self.add_field_error(field, message);
        self
    }

    pub fn add_field_error(&mut self, field: impl Into<String>, message: impl Into<String>) {
        let field = field.into();
        match self
            .field_errors
            .iter_mut()
            .find(|(name, _)| *name == field)
        {
            Some((_, messages)) => messages.push(message.into()),
            None => self.field_errors.push((field, vec![message.into()])),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.form_errors.is_empty() && self.field_errors.is_empty()
    }
}

impl utoipa::PartialSchema for Details {
    fn schema() -> RefOr<Schema> {
        let messages = || ArrayBuilder::new().items(ObjectBuilder::new().schema_type(Type::String));
        ObjectBuilder::new()
            .property("formErrors", messages())
            .required("formErrors")
            .property(
                "fieldErrors",
                ObjectBuilder::new()
                    .additional_properties(Some(messages()))
                    .description(Some("Each bad field's messages, by field name.")),
            )
            .required("fieldErrors")
            .description(Some(
                "What failed: `formErrors` for the body as a whole, `fieldErrors` by field, in the \
                 order the checks found them.",
            ))
            .into()
    }
}

impl utoipa::ToSchema for Details {
    fn name() -> std::borrow::Cow<'static, str> {
        "ValidationDetails".into()
    }
}

struct FieldErrors<'a>(&'a [(String, Vec<String>)]);

impl Serialize for FieldErrors<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (field, messages) in self.0 {
            map.serialize_entry(field, messages)?;
        }
        map.end()
    }
}

impl Serialize for Details {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(2))?;
        map.serialize_entry("formErrors", &self.form_errors)?;
        map.serialize_entry("fieldErrors", &FieldErrors(&self.field_errors))?;
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_details_keep_both_keys() {
        let json =
            serde_json::to_string(&Details::new().form_error("Expected object, received null"))
                .unwrap();
        assert_eq!(
            json,
            r#"{"formErrors":["Expected object, received null"],"fieldErrors":{}}"#
        );
    }

    #[test]
    fn field_errors_keep_insertion_order_and_group_by_field() {
        let details = Details::new()
            .field_error("to_client_id", "Required")
            .field_error("payment_type", "Invalid enum value")
            .field_error("to_client_id", "Expected number");
        let json = serde_json::to_string(&details).unwrap();
        assert_eq!(
            json,
            concat!(
                r#"{"formErrors":[],"fieldErrors":{"to_client_id":["Required","Expected number"],"#,
                r#""payment_type":["Invalid enum value"]}}"#
            )
        );
    }
}
