//! Decimals in answers. The spec types `point_amount` as a JSON number: integral values are
//! written as integers (`100`), others as the nearest JSON number. Money keeps its exact
//! two-decimal text, and the balance its exact points text (`domain::Points`).

use bigdecimal::{BigDecimal, ToPrimitive};
use serde::Serializer;

pub fn number(value: &BigDecimal) -> serde_json::Value {
    if let Some(i) = value.to_i64().filter(|_| value.is_integer()) {
        return serde_json::Value::from(i);
    }
    value
        .to_f64()
        .and_then(serde_json::Number::from_f64)
        .map_or(serde_json::Value::Null, serde_json::Value::Number)
}

pub fn as_number<S: Serializer>(value: &BigDecimal, serializer: S) -> Result<S::Ok, S::Error> {
    serde::Serialize::serialize(&number(value), serializer)
}

pub fn as_optional_number<S: Serializer>(
    value: &Option<BigDecimal>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    match value {
        Some(v) => as_number(v, serializer),
        None => serializer.serialize_none(),
    }
}

pub fn as_money<S: Serializer>(value: &BigDecimal, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(&value.with_scale(2).to_plain_string())
}

#[cfg(test)]
mod tests {
    use std::str::FromStr;

    use super::*;

    #[test]
    fn integers_stay_integers() {
        assert_eq!(
            number(&BigDecimal::from_str("100").unwrap()).to_string(),
            "100"
        );
        assert_eq!(
            number(&BigDecimal::from_str("100.000").unwrap()).to_string(),
            "100"
        );
        assert_eq!(
            number(&BigDecimal::from_str("12.5").unwrap()).to_string(),
            "12.5"
        );
    }
}
