//! Decimals on the wire. The spec types point amounts as JSON numbers: each is written as
//! the exact decimal in plain notation, integral values as integers (`100`, also for a
//! fixture's `100.0`), never through an f64 (`domain::decimal`). Money keeps its exact
//! two-decimal text, and a history line its points text (`domain::Points`).

use bigdecimal::BigDecimal;
use serde::Serializer;

pub(crate) fn as_number<S: Serializer>(
    value: &BigDecimal,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serde::Serialize::serialize(&domain::decimal::to_number(value), serializer)
}

pub(crate) fn as_optional_number<S: Serializer>(
    value: &Option<BigDecimal>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    match value {
        Some(v) => as_number(v, serializer),
        None => serializer.serialize_none(),
    }
}

pub(crate) fn as_money<S: Serializer>(
    value: &BigDecimal,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(&value.with_scale(2).to_plain_string())
}

pub(crate) fn as_points_text<S: Serializer>(
    value: &BigDecimal,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(&domain::Points::new(value.clone()).to_text())
}
