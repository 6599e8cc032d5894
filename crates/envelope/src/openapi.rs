//! The four error bodies as OpenAPI schemas, for the services' documents.

use utoipa::ToSchema;
use utoipa::openapi::{Content, OpenApi, Ref, RefOr, Response};

use crate::{Envelope, depth, nul};

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

/// The name under which `envelope`'s schema is in a document's components.
pub fn schema_name(envelope: Envelope) -> &'static str {
    match envelope {
        Envelope::A => "ErrorA",
        Envelope::B => "ErrorB",
        Envelope::C => "ErrorC",
        Envelope::Operator => "OperatorError",
    }
}

/// The description of the 400 the door gives on every route.
pub fn door_400_description() -> String {
    format!(
        "`{}` (a NUL in the path, the query or the body) or `{}`: refused on every route \
         before any handler runs; a compressed body (`Content-Encoding: gzip` or `deflate`) is \
         checked once decoded, and one that does not decode is `Invalid body: it is not valid \
         gzip data`",
        nul::MESSAGE,
        depth::MESSAGE
    )
}

/// One answer in `schema`.
pub fn answer(description: &str, schema: &str) -> Response {
    Response::builder()
        .description(description)
        .content(
            "application/json",
            Content::new(Some(Ref::from_schema_name(schema))),
        )
        .build()
}

/// Documents, on every operation of `openapi`, the answers that the app's door
/// ([`nul::middleware`], on every app) gives on every route before any handler runs, in the
/// app's envelope: 400 for a NUL or a body nested too deep (or a compressed body that does
/// not decode), 408 for a body that stops arriving, 413 for a body over 64 KiB, 415 for a
/// `Content-Encoding` other than gzip and deflate. Only statuses an operation does not document yet
/// are added: where it has its own 400, that answer has the same envelope, and its
/// description names its own messages. Found by `make fuzz-api` (schemathesis sends NULs to
/// every route).
pub fn add_door_answers(openapi: &mut OpenApi, envelope: Envelope) {
    let schema = schema_name(envelope);
    let answers = [
        ("400", door_400_description()),
        (
            "408",
            format!(
                "`{}`: a request body that did not arrive whole within the read deadline \
                 (HTTP_BODY_TIMEOUT_MS); the connection is closed",
                nul::BODY_TIMEOUT_MESSAGE
            ),
        ),
        (
            "413",
            "`Payload Too Large`: a request body over 64 KiB, compressed or once decoded \
             (decoding stops there), refused before any handler runs"
                .to_owned(),
        ),
        (
            "415",
            "`Unsupported Media Type: Content-Encoding ... is not supported (gzip or deflate)`: \
             a body in another coding, refused before any handler runs"
                .to_owned(),
        ),
    ];
    for item in openapi.paths.paths.values_mut() {
        let operations = [
            &mut item.get,
            &mut item.put,
            &mut item.post,
            &mut item.delete,
            &mut item.options,
            &mut item.head,
            &mut item.patch,
            &mut item.trace,
        ];
        for operation in operations.into_iter().flatten() {
            for (status, description) in &answers {
                operation
                    .responses
                    .responses
                    .entry((*status).to_owned())
                    .or_insert_with(|| RefOr::T(answer(description, schema)));
            }
        }
    }
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
    fn the_door_answers_are_added_where_missing_and_kept_where_documented() {
        use utoipa::openapi::path::{HttpMethod, Operation, Paths};
        let own_400 = answer("`code is required`", "ErrorC");
        let mut openapi = OpenApi::new(utoipa::openapi::Info::new("t", "1"), Paths::new());
        let mut with_400 = Operation::new();
        with_400
            .responses
            .responses
            .insert("400".into(), RefOr::T(own_400));
        openapi
            .paths
            .add_path_operation("/a", vec![HttpMethod::Post], with_400);
        openapi
            .paths
            .add_path_operation("/b", vec![HttpMethod::Get], Operation::new());
        add_door_answers(&mut openapi, Envelope::C);
        let doc = serde_json::to_value(&openapi).unwrap();
        assert_eq!(
            doc["paths"]["/a"]["post"]["responses"]["400"]["description"],
            "`code is required`"
        );
        for (path, method) in [("/a", "post"), ("/b", "get")] {
            let answers = &doc["paths"][path][method]["responses"];
            for status in ["408", "413"] {
                assert_eq!(
                    answers[status]["content"]["application/json"]["schema"]["$ref"],
                    "#/components/schemas/ErrorC"
                );
            }
        }
        let door = &doc["paths"]["/b"]["get"]["responses"]["400"];
        assert!(door["description"].as_str().unwrap().contains(nul::MESSAGE));
        assert_eq!(
            door["content"]["application/json"]["schema"]["$ref"],
            "#/components/schemas/ErrorC"
        );
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
