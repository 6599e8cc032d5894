//! The body of `POST /point-orders`, read field by field with the spec's coercions. Every
//! field is checked and every problem reported (`fieldErrors` in schema order); a body that
//! is not a JSON object is a form error. The document shows it as
//! `relayed_routes::orders::OrderBody`, which is never deserialized.

use bigdecimal::{BigDecimal, ToPrimitive};
use envelope::Details;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

pub use crate::orders::PaymentType;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrderRequest {
    /// Lower case.
    pub point_offer_id: String,
    pub to_client_id: i64,
    pub payment_type: PaymentType,
    /// Lower case; `None` for missing, null, 0, "0" and "".
    pub point_occasion_id: Option<String>,
    /// Trimmed, 1 to 255 characters; `None` for missing, null, empty and spaces.
    pub occasion: Option<String>,
}

impl OrderRequest {
    /// What an `Idempotency-Key` binds to: the request as read, not its raw bytes.
    pub fn fingerprint(&self) -> Vec<u8> {
        let text = format!(
            "{}|{}|{}|{}|{}",
            self.point_offer_id,
            self.to_client_id,
            self.payment_type.as_str(),
            self.point_occasion_id.as_deref().unwrap_or(""),
            self.occasion.as_deref().unwrap_or("")
        );
        Sha256::digest(text.as_bytes()).to_vec()
    }
}

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

const OBJECT_ID: &str = "must be a 24-character hex ObjectId";
const OCCASION_MAX_CHARS: usize = 255;

fn offer_id(body: &Map<String, Value>) -> Result<String, String> {
    match body.get("point_offer_id") {
        None => Err("Required".into()),
        Some(Value::String(s)) if domain::ObjectId::is_valid(s) => Ok(s.to_ascii_lowercase()),
        Some(Value::String(_)) => Err(format!("point_offer_id {OBJECT_ID}")),
        Some(other) => Err(format!("Expected string, received {}", type_name(other))),
    }
}

/// 2^53: below it a double holds every integer, so an integral f64 below it is the
/// integer the body wrote (or, for a fraction too fine for a double, the one JavaScript
/// reads); from it on, a double may be a neighbour of the written integer.
const EXACT_IN_F64: f64 = 9_007_199_254_740_992.0;

/// A positive integer, read as JavaScript's `Number()` would (`" 7 "` → 7, `true` → 1), but
/// exactly: an id past 2^53 is the integer the body wrote, never the double next to it
/// (which would be another client's id).
fn to_client_id(body: &Map<String, Value>) -> Result<i64, String> {
    // The f64 decides the spec's categories (not a number, not an integer, not positive);
    // the text, when there is one, gives the exact id.
    let (number, text) = match body.get("to_client_id") {
        None => return Err("Required".into()),
        Some(Value::Null) => return Err("Expected number, received null".into()),
        Some(Value::Bool(b)) => (Some(f64::from(u8::from(*b))), None),
        // A number past a double's range is JavaScript's Infinity (serde_json keeps its
        // text): not an integer, like any other non-integer.
        Some(Value::Number(n)) => (n.as_f64().or(Some(f64::INFINITY)), Some(n.to_string())),
        Some(Value::String(s)) if s.trim().is_empty() => (Some(0.0), None),
        Some(Value::String(s)) => (
            s.trim().parse::<f64>().ok().filter(|f| f.is_finite()),
            Some(s.trim().to_owned()),
        ),
        Some(other) => return Err(format!("Expected number, received {}", type_name(other))),
    };
    let number = number.ok_or_else(|| "Expected number, received nan".to_owned())?;
    if number.fract() != 0.0 {
        return Err("Expected integer, received float".into());
    }
    if number <= 0.0 || number > i64::MAX as f64 {
        return Err("Number must be greater than 0".into());
    }
    if number < EXACT_IN_F64 {
        return Ok(number as i64);
    }
    // Past 2^53 the double may be a neighbour: read the text's decimal (`1e16` and
    // `12345678901234567.0` included) and take it only when it is an integer an i64 holds.
    let exact = text
        .as_deref()
        .and_then(|t| t.parse::<BigDecimal>().ok())
        .ok_or_else(|| "Expected number, received nan".to_owned())?;
    if !exact.is_integer() {
        return Err("Expected integer, received float".into());
    }
    exact
        .to_i64()
        .ok_or_else(|| "Number must be greater than 0".to_owned())
}

fn payment_type(body: &Map<String, Value>) -> Result<PaymentType, String> {
    match body.get("payment_type") {
        None => Err("Required".into()),
        Some(Value::String(s)) => PaymentType::from_word(s).ok_or_else(|| {
            format!("Invalid enum value. Expected 'point' | 'checkout', received '{s}'")
        }),
        Some(other) => Err(format!("Expected string, received {}", type_name(other))),
    }
}

fn occasion_id(body: &Map<String, Value>) -> Result<Option<String>, String> {
    match body.get("point_occasion_id") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) if n.as_f64() == Some(0.0) => Ok(None),
        Some(Value::String(s)) if s.is_empty() || s == "0" => Ok(None),
        Some(Value::String(s)) if domain::ObjectId::is_valid(s) => Ok(Some(s.to_ascii_lowercase())),
        Some(_) => Err(format!("point_occasion_id {OBJECT_ID}")),
    }
}

fn occasion(body: &Map<String, Value>) -> Result<Option<String>, String> {
    match body.get("occasion") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => {
            let s = s.trim();
            if s.is_empty() {
                Ok(None)
            } else if s.chars().count() > OCCASION_MAX_CHARS {
                Err(format!(
                    "String must contain at most {OCCASION_MAX_CHARS} character(s)"
                ))
            } else {
                Ok(Some(s.to_owned()))
            }
        }
        Some(other) => Err(format!("Expected string, received {}", type_name(other))),
    }
}

/// Reads the raw body. Unknown keys are dropped.
pub fn parse(raw: &[u8]) -> Result<OrderRequest, Details> {
    let value = serde_json::from_slice::<Value>(raw).unwrap_or(Value::Null);
    let Value::Object(body) = value else {
        return Err(
            Details::new().form_error(format!("Expected object, received {}", type_name(&value)))
        );
    };
    let mut details = Details::new();
    let offer = field(&mut details, "point_offer_id", offer_id(&body));
    let client = field(&mut details, "to_client_id", to_client_id(&body));
    let kind = field(&mut details, "payment_type", payment_type(&body));
    let occasion_id = field(&mut details, "point_occasion_id", occasion_id(&body));
    let occasion = field(&mut details, "occasion", occasion(&body));
    match (offer, client, kind, occasion_id, occasion) {
        (
            Some(point_offer_id),
            Some(to_client_id),
            Some(payment_type),
            Some(point_occasion_id),
            Some(occasion),
        ) => Ok(OrderRequest {
            point_offer_id,
            to_client_id,
            payment_type,
            point_occasion_id,
            occasion,
        }),
        _ => Err(details),
    }
}

/// A field's value, or `None` with its message added to `details` (every field is read, so
/// that the answer lists all the fields that failed).
fn field<T>(details: &mut Details, name: &str, outcome: Result<T, String>) -> Option<T> {
    outcome
        .map_err(|message| details.add_field_error(name, message))
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const OFFER: &str = "64b7f0c2a1b2c3d4e5f60718";

    fn body(extra: Value) -> Vec<u8> {
        let mut base =
            json!({"point_offer_id": OFFER, "to_client_id": 1002, "payment_type": "point"});
        for (k, v) in extra.as_object().unwrap() {
            base[k] = v.clone();
        }
        base.to_string().into_bytes()
    }

    fn field_error(extra: Value, field: &str) -> Option<String> {
        let details = parse(&body(extra)).err()?;
        let value = serde_json::to_value(&details).unwrap();
        value["fieldErrors"][field][0].as_str().map(str::to_owned)
    }

    #[test]
    fn to_client_id_coercions() {
        let id = |v: Value| {
            parse(&body(json!({"to_client_id": v})))
                .map(|r| r.to_client_id)
                .ok()
        };
        assert_eq!(id(json!(" 7 ")), Some(7));
        assert_eq!(id(json!(true)), Some(1));
        assert_eq!(id(json!("12")), Some(12));
        assert_eq!(id(json!(7.0)), Some(7));
        // Past 2^53, exactly the id written, never a neighbouring double's.
        let big: Value = serde_json::from_str("9007199254740993").unwrap();
        assert_eq!(id(big), Some(9_007_199_254_740_993));
        assert_eq!(id(json!(" 9007199254740993 ")), Some(9_007_199_254_740_993));
        assert_eq!(id(json!("9223372036854775807")), Some(i64::MAX));
        let big_float: Value = serde_json::from_str("9007199254740993.0").unwrap();
        assert_eq!(id(big_float), Some(9_007_199_254_740_993));
        assert_eq!(id(json!("1e16")), Some(10_000_000_000_000_000));
        for bad in [
            json!(""),
            json!(null),
            json!("abc"),
            json!("12.5"),
            json!(12.5),
            json!("9007199254740993.5"),
            json!("9223372036854775808"),
            serde_json::from_str("9223372036854775808").unwrap(),
            json!(false),
            json!(-3),
            json!([1]),
        ] {
            assert_eq!(id(bad.clone()), None, "{bad}");
        }
    }

    #[test]
    fn offer_id_is_24_hex_never_converted() {
        for bad in [json!(3), json!("3"), json!(12.5), json!(null)] {
            assert!(
                field_error(json!({"point_offer_id": bad.clone()}), "point_offer_id").is_some(),
                "{bad}"
            );
        }
        let upper = parse(&body(json!({"point_offer_id": OFFER.to_uppercase()}))).unwrap();
        assert_eq!(upper.point_offer_id, OFFER);
    }

    #[test]
    fn payment_type_is_point_or_checkout() {
        for bad in [json!("card"), json!("tabby"), json!("Point"), json!(1)] {
            assert!(
                field_error(json!({"payment_type": bad.clone()}), "payment_type").is_some(),
                "{bad}"
            );
        }
    }

    #[test]
    fn occasion_id_zeroes_mean_none_and_junk_fails() {
        for none in [json!(null), json!(0), json!("0"), json!("")] {
            assert_eq!(
                parse(&body(json!({"point_occasion_id": none})))
                    .unwrap()
                    .point_occasion_id,
                None
            );
        }
        assert!(field_error(json!({"point_occasion_id": "abc"}), "point_occasion_id").is_some());
        assert!(field_error(json!({"point_occasion_id": 5}), "point_occasion_id").is_some());
    }

    #[test]
    fn occasion_is_trimmed_text_up_to_255() {
        let occasion = |v: Value| parse(&body(json!({"occasion": v}))).map(|r| r.occasion);
        assert_eq!(occasion(json!("  Eid  ")), Ok(Some("Eid".into())));
        assert_eq!(occasion(json!("   ")), Ok(None));
        assert_eq!(occasion(json!(null)), Ok(None));
        assert_eq!(
            occasion(json!("x".repeat(255))).map(|o| o.map(|s| s.len())),
            Ok(Some(255))
        );
        assert!(occasion(json!("x".repeat(256))).is_err());
        assert!(occasion(json!(5)).is_err());
    }

    #[test]
    fn not_an_object_is_a_form_error() {
        for (raw, received) in [
            (&b""[..], "null"),
            (b"null", "null"),
            (b"[1]", "array"),
            (b"5", "number"),
            (b"{oops", "null"),
        ] {
            let details = serde_json::to_value(parse(raw).unwrap_err()).unwrap();
            assert_eq!(
                details,
                json!({"formErrors": [format!("Expected object, received {received}")], "fieldErrors": {}})
            );
        }
    }

    #[test]
    fn every_bad_field_is_reported_in_schema_order() {
        let details =
            serde_json::to_value(parse(br#"{"payment_type": "card", "occasion": 1}"#).unwrap_err())
                .unwrap();
        let fields: Vec<&String> = details["fieldErrors"].as_object().unwrap().keys().collect();
        assert_eq!(
            fields,
            ["point_offer_id", "to_client_id", "payment_type", "occasion"]
        );
    }

    #[test]
    fn unknown_keys_are_dropped() {
        assert!(parse(&body(json!({"payer_id": 5, "extra": [1]}))).is_ok());
    }
}
