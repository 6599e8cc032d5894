//! What any answer of the point-order body parser must satisfy, whatever the bytes. Shared
//! by the property tests and the fuzz target `fuzz/fuzz_targets/order_body.rs`.

use point_service::order_body::{self, OrderRequest};
use serde_json::{Map, Value};

/// The body's fields in schema order, the order `fieldErrors` lists them in.
pub const FIELDS: [&str; 5] = [
    "point_offer_id",
    "to_client_id",
    "payment_type",
    "point_occasion_id",
    "occasion",
];

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn is_lower_hex_id(s: &str) -> bool {
    s.len() == 24
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Parses `raw` (which must not panic) and checks the answer: an accepted request is in
/// range and is what the body said; a refusal is the details structure, with a form error
/// exactly when the body is not a JSON object and otherwise one message per bad field, in
/// schema order. Returns the answer, the refusal as its JSON.
pub fn check_raw(raw: &[u8]) -> Result<Result<OrderRequest, Value>, String> {
    let json = serde_json::from_slice::<Value>(raw).ok();
    match order_body::parse(raw) {
        Ok(request) => match &json {
            Some(Value::Object(body)) => {
                check_request(&request, body)?;
                Ok(Ok(request))
            }
            _ => Err(format!(
                "{}: not a JSON object, yet accepted as {request:?}",
                String::from_utf8_lossy(raw)
            )),
        },
        Err(details) => {
            let details = serde_json::to_value(&details)
                .map_err(|e| format!("details do not serialise: {e}"))?;
            check_details(&details, json.as_ref())
                .map_err(|e| format!("{}: {e}", String::from_utf8_lossy(raw)))?;
            Ok(Err(details))
        }
    }
}

/// The refusal's shape: `{"formErrors": [...], "fieldErrors": {...}}`, those two keys in that
/// order. `json` is the body as JSON, `None` when it is not JSON at all (read as null).
pub fn check_details(details: &Value, json: Option<&Value>) -> Result<(), String> {
    let Some(map) = details.as_object() else {
        return Err(format!("details {details} are not an object"));
    };
    let keys: Vec<&str> = map.keys().map(String::as_str).collect();
    if keys != ["formErrors", "fieldErrors"] {
        return Err(format!("details have the keys {keys:?}"));
    }
    let (Some(form), Some(fields)) = (map["formErrors"].as_array(), map["fieldErrors"].as_object())
    else {
        return Err(format!("details {details} have the wrong types"));
    };
    match json {
        Some(Value::Object(_)) => {
            if !form.is_empty() {
                return Err(format!("an object got form errors: {details}"));
            }
            if fields.is_empty() {
                return Err("refused with no field error".to_owned());
            }
            let mut last = None;
            for (field, messages) in fields {
                let Some(position) = FIELDS.iter().position(|f| f == field) else {
                    return Err(format!("an error for the unknown field {field:?}"));
                };
                if last.is_some_and(|l| l >= position) {
                    return Err(format!("fieldErrors not in schema order: {details}"));
                }
                last = Some(position);
                let one_text = messages
                    .as_array()
                    .is_some_and(|m| m.len() == 1 && m[0].as_str().is_some_and(|s| !s.is_empty()));
                if !one_text {
                    return Err(format!("{field}: not one message: {messages}"));
                }
            }
            Ok(())
        }
        other => {
            let received = other.map_or("null", type_name);
            let expected = serde_json::json!({
                "formErrors": [format!("Expected object, received {received}")],
                "fieldErrors": {},
            });
            if *details == expected {
                Ok(())
            } else {
                Err(format!("expected {expected}, got {details}"))
            }
        }
    }
}

/// An accepted request against the body it came from.
pub fn check_request(request: &OrderRequest, body: &Map<String, Value>) -> Result<(), String> {
    let field = |name: &str| body.get(name).unwrap_or(&Value::Null);
    let fail = |what: &str| {
        Err(format!(
            "{what}: {request:?} from {}",
            Value::Object(body.clone())
        ))
    };

    let offer = field("point_offer_id")
        .as_str()
        .map(str::to_ascii_lowercase);
    if !is_lower_hex_id(&request.point_offer_id)
        || offer.as_deref() != Some(&request.point_offer_id)
    {
        return fail("point_offer_id is not the body's 24 hex, lower-cased");
    }

    // Read as JavaScript's Number() reads it (the id is that number as f64), and exactly:
    // a body that writes a plain integer gets that very integer, past 2^53 too, where the
    // f64 would also match a neighbouring id.
    let number = match field("to_client_id") {
        Value::Bool(true) => Some(1.0),
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse::<f64>().ok(),
        _ => None,
    };
    let written = match field("to_client_id") {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => s.trim().parse::<i64>().ok(),
        _ => None,
    };
    if request.to_client_id <= 0
        || number != Some(request.to_client_id as f64)
        || written.is_some_and(|id| id != request.to_client_id)
    {
        return fail("to_client_id is not the body's positive integer");
    }

    if field("payment_type").as_str() != Some(request.payment_type.as_str()) {
        return fail("payment_type is not the body's");
    }

    let occasion_id = field("point_occasion_id");
    match &request.point_occasion_id {
        Some(id) => {
            if !is_lower_hex_id(id)
                || occasion_id.as_str().map(str::to_ascii_lowercase).as_ref() != Some(id)
            {
                return fail("point_occasion_id is not the body's 24 hex, lower-cased");
            }
        }
        None => {
            let none = match occasion_id {
                Value::Null => true,
                Value::Number(n) => n.as_f64() == Some(0.0),
                Value::String(s) => s.is_empty() || s == "0",
                _ => false,
            };
            if !none {
                return fail("point_occasion_id dropped");
            }
        }
    }

    match (&request.occasion, field("occasion")) {
        (None, Value::Null) => {}
        (None, Value::String(s)) if s.trim().is_empty() => {}
        (Some(occasion), Value::String(s))
            if occasion == s.trim() && !occasion.is_empty() && occasion.chars().count() <= 255 => {}
        _ => return fail("occasion is not the body's trimmed text of 1 to 255 characters"),
    }
    Ok(())
}

/// One input of the fuzz target `order_body`, checked exactly as the target checks it (the
/// target calls this; `main.rs` replays the target's seeds and corpus through it).
pub fn check_fuzz_input(data: &[u8]) -> Result<(), String> {
    check_raw(data).map(|_| ())
}
