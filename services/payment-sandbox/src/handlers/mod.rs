//! One module per resource, one function per route, named as the document's `operationId`;
//! each reads the request, asks the gateway (`crate::gateway`) and answers. Paths are
//! relative to their scope in `crate::routes`.

pub mod payments;
pub mod sessions;
pub mod settlements;
pub mod three_ds;

/// The JSON request in `body`, or why not (a 422, in the sandbox's shape).
fn json_body<T: serde::de::DeserializeOwned>(body: &[u8]) -> Result<T, crate::error::Refusal> {
    serde_json::from_slice(body).map_err(|e| crate::error::Refusal::InvalidRequest(e.to_string()))
}
