//! An HTTP answer in the form every test compares: `(status, body)`.

use serde_json::Value;

/// The status and the body read as JSON, or as a JSON string when it is not JSON (a plain
/// text answer then fails the comparison with its text in the message).
pub async fn answer(response: reqwest::Response) -> (u16, Value) {
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

/// The `id`s of a list answer, `{data: [...]}` or a bare array, in its order; rows without
/// a numeric `id` are left out (and so make the comparison fail).
pub fn ids(list: &Value) -> Vec<i64> {
    list.get("data")
        .unwrap_or(list)
        .as_array()
        .map(|rows| rows.iter().filter_map(|r| r["id"].as_i64()).collect())
        .unwrap_or_default()
}

/// An object's keys in the order the body has them (the spec fixes key orders).
pub fn keys(body: &Value) -> Vec<String> {
    body.as_object().unwrap().keys().cloned().collect()
}
