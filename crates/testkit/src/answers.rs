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

/// A 429's `Retry-After`, in delta-seconds (RFC 9110); fails the test when there is none.
pub fn retry_after(response: &reqwest::Response) -> u64 {
    assert_eq!(response.status(), 429);
    response
        .headers()
        .get("retry-after")
        .expect("a 429 carries Retry-After")
        .to_str()
        .unwrap()
        .parse()
        .expect("Retry-After in delta-seconds")
}

/// `wait` is `expected` seconds less at most the whole seconds that passed since `since`, the
/// moment the test aged the counted rows: the only slack a limit's `Retry-After` is allowed.
pub fn assert_wait(wait: u64, expected: u64, since: std::time::Instant) {
    let slack = since.elapsed().as_secs() + 1;
    assert!(
        wait <= expected && wait + slack >= expected,
        "Retry-After {wait}, expected {expected} (less at most {slack} s taken by the test)"
    );
}
