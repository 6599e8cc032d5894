//! The four error bodies as OpenAPI schemas, for the services' documents.

use utoipa::ToSchema;

/// Envelope A. `stack` appears outside production only.
#[derive(ToSchema)]
#[schema(as = ErrorA)]
pub struct DocErrorA {
    pub status: u16,
    pub message: String,
    pub stack: Option<String>,
}

/// Envelope B.
#[derive(ToSchema)]
#[schema(as = ErrorB)]
pub struct DocErrorB {
    /// Always false.
    pub success: bool,
    pub error: DocErrorBInner,
}

#[derive(ToSchema)]
#[schema(as = ErrorBInner)]
pub struct DocErrorBInner {
    pub code: String,
    pub message: String,
    /// `{formErrors: [string], fieldErrors: {field: [string]}}` for a body that failed validation.
    #[schema(value_type = Option<Object>)]
    pub details: Option<()>,
}

/// Envelope C.
#[derive(ToSchema)]
#[schema(as = ErrorC)]
pub struct DocErrorC {
    pub message: String,
    #[schema(rename = "statusCode")]
    pub status_code: u16,
}

/// The operator API's error body; `error` is the status's reason phrase.
#[derive(ToSchema)]
#[schema(as = OperatorError)]
pub struct DocOperatorError {
    #[schema(rename = "statusCode")]
    pub status_code: u16,
    pub message: String,
    pub error: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use utoipa::PartialSchema;

    fn properties<T: PartialSchema>() -> Vec<String> {
        let schema = serde_json::to_value(T::schema()).unwrap();
        // utoipa keeps properties sorted; the order of the answers is tested with them.
        let mut keys: Vec<String> = schema["properties"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        keys.sort();
        keys
    }

    #[test]
    fn the_documented_keys_are_the_answered_keys() {
        assert_eq!(properties::<DocErrorA>(), ["message", "stack", "status"]);
        assert_eq!(properties::<DocErrorB>(), ["error", "success"]);
        assert_eq!(
            properties::<DocErrorBInner>(),
            ["code", "details", "message"]
        );
        assert_eq!(properties::<DocErrorC>(), ["message", "statusCode"]);
        assert_eq!(
            properties::<DocOperatorError>(),
            ["error", "message", "statusCode"]
        );
    }
}
