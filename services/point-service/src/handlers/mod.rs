//! One module per resource, one function per route. Handlers only translate between HTTP
//! and the rules: the caller (`server::caller::Caller`, resolved before the handler runs), parse,
//! call, answer.

pub mod back_office;
pub mod internal;
pub mod offers;
pub mod orders;
pub mod pay;
pub mod points;
pub mod webhook;

/// A request body as JSON; anything else reads as null, which each body's rules refuse in
/// their own words.
pub fn json_body(raw: &[u8]) -> serde_json::Value {
    serde_json::from_slice(raw).unwrap_or(serde_json::Value::Null)
}

/// The first value of a query key. Queries are read as pairs, not into a struct, so that a
/// key sent twice is no 400 (`duplicate field`): the spec makes `language` never an error
/// and page numbers fall back to their defaults. Found by `make fuzz-api`.
pub fn first<'a>(query: &'a [(String, String)], key: &str) -> Option<&'a str> {
    query
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}
