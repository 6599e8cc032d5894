//! `GET /system_configs/point_rates`: the earn-rate table, sorted by `amount_from` (null as 0).

use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use serde_json::Value;

use catalog_db::schema::system_configs;

use crate::error::OrderError;
use crate::seed::POINT_RATES_KEY;

pub use back_office::earn_rates::Rate;

/// The stored option is not a list (a 500: its text outside production).
pub const NOT_A_LIST: &str = "the point_rates option is not a list";
/// A stored row is not an object (a 500: its text outside production).
pub const ROW_NOT_AN_OBJECT: &str = "a point_rates row is not an object";

envelope::answer_set! {
    /// The 500 as the document describes it: the stored option's faults, or any other failure.
    pub InternalAnswer, envelope::Envelope::C, {
        "500" => format!(
            "the stored option is not a list (`{NOT_A_LIST}`) or a row is not an object \
             (`{ROW_NOT_AN_OBJECT}`): that text outside production, `{}` in production; any other \
             unexpected failure likewise with its raw text",
            envelope::INTERNAL_MESSAGE
        ),
    }
}

/// The rows; `[]` when the option is unset; an error when it is not a list of objects.
pub async fn rates(conn: &mut AsyncPgConnection) -> Result<Vec<Rate>, OrderError> {
    let stored: Option<Value> = system_configs::table
        .find(POINT_RATES_KEY)
        .select(system_configs::value)
        .first(conn)
        .await
        .optional()?;
    stored.map_or(Ok(Vec::new()), rows)
}

/// The rows of the stored option, sorted; an error when it is not a list of objects.
pub fn rows(stored: Value) -> Result<Vec<Rate>, OrderError> {
    let Value::Array(rows) = stored else {
        return Err(OrderError::Internal(NOT_A_LIST.into()));
    };
    let mut rates = rows
        .into_iter()
        .map(|row| match row {
            Value::Object(mut row) => Ok(Rate {
                amount_from: row.remove("amount_from").unwrap_or(Value::Null),
                amount_to: row.remove("amount_to").unwrap_or(Value::Null),
                point_earn: row.remove("point_earn").unwrap_or(Value::Null),
            }),
            _ => Err(OrderError::Internal(ROW_NOT_AN_OBJECT.into())),
        })
        .collect::<Result<Vec<_>, _>>()?;
    // Compared as the exact decimals they were written as (two starts that differ past a
    // double's 17 digits keep their order); null, and anything not a number, count as 0.
    let from = |rate: &Rate| match &rate.amount_from {
        Value::Number(n) => domain::decimal::from_number(n).unwrap_or_default(),
        _ => bigdecimal::BigDecimal::default(),
    };
    rates.sort_by_cached_key(from);
    Ok(rates)
}
