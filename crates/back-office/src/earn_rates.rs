//! The earn-rate table: the points an order earns by the range its total falls in, as the
//! app reads it (`GET /api/v2/client/system_configs/point_rates`). The order service keeps
//! it (the `catalog` database's `point_rates` option). Read and replaced whole, each
//! replacement a new version, as the expiry policy is: a replacement names the version it
//! was made from, so that of two operators editing at once the second is refused.
//!
//! A table the back office writes is ordered ranges without gaps or overlaps: the first
//! from 0 or more, each next one starting where the one before it ends, the last
//! open-ended (`amount_to` null), as the spec describes the rows.

use bigdecimal::BigDecimal;
use chrono::{DateTime, Utc};
use domain::Money;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

use crate::body;

/// A row, as the app reads it: the three values as stored (numbers, or null as the spec has
/// them; a table loaded by `seed` may hold other values, which are answered as they are).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, ToSchema)]
pub struct Rate {
    /// Start of the range in SAR; null counts as 0 when sorting.
    #[schema(value_type = Option<f64>, required)]
    pub amount_from: Value,
    /// End of the range; null on the last row.
    #[schema(value_type = Option<f64>, required)]
    pub amount_to: Value,
    /// Points earned when the order total falls in the range.
    #[schema(value_type = f64)]
    pub point_earn: Value,
}

/// A row as the back office answers it: each value as exact decimal text (`"49.5"`), as the
/// stored table holds it (the app reads the same rows as JSON numbers).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, ToSchema)]
#[schema(as = EarnRate)]
pub struct EarnRate {
    /// Start of the range in SAR; null counts as 0 (a table loaded by `seed` may hold it).
    #[schema(format = "decimal", example = "0", required)]
    pub amount_from: Option<String>,
    /// End of the range in SAR; null on the last row.
    #[schema(format = "decimal", example = "50", required)]
    pub amount_to: Option<String>,
    /// Points earned when the order total falls in the range; null only in a row loaded by
    /// `seed` without one.
    #[schema(format = "decimal", example = "5", required)]
    pub point_earn: Option<String>,
}

/// A stored row holds a value that is neither a number nor null (only `seed` can store one):
/// the table cannot be shown as decimals, and a read of it is a 500 that names the value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the stored earn-rate table holds rates[{row}].{key}, which is neither a number nor null")]
pub struct Unreadable {
    pub row: usize,
    pub key: &'static str,
}

impl EarnRate {
    /// The stored row `row` (sorted as the app reads them) as decimal text.
    pub fn of(rate: &Rate, row: usize) -> Result<Self, Unreadable> {
        let text = |value: &Value, key: &'static str| match value {
            Value::Null => Ok(None),
            Value::Number(number) => domain::decimal::from_number(number)
                .map(|decimal| Some(crate::decimal_text(&decimal)))
                .map_err(|_| Unreadable { row, key }),
            _ => Err(Unreadable { row, key }),
        };
        Ok(Self {
            amount_from: text(&rate.amount_from, "amount_from")?,
            amount_to: text(&rate.amount_to, "amount_to")?,
            point_earn: text(&rate.point_earn, "point_earn")?,
        })
    }
}

/// The table and its version, in this key order.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = EarnRateTable)]
pub struct EarnRateTable {
    /// The rows as the app reads them, sorted by `amount_from`, as decimal text.
    pub rates: Vec<EarnRate>,
    /// 0 while no table is set; each change takes a higher one.
    pub version: i64,
    /// When it was last changed; null while no table is set.
    #[schema(required)]
    pub updated_at: Option<DateTime<Utc>>,
}

impl EarnRateTable {
    /// The stored rows (sorted) with their version and time.
    pub fn of(
        rates: &[Rate],
        version: i64,
        updated_at: Option<DateTime<Utc>>,
    ) -> Result<Self, Unreadable> {
        Ok(Self {
            rates: rates
                .iter()
                .enumerate()
                .map(|(row, rate)| EarnRate::of(rate, row))
                .collect::<Result<_, _>>()?,
            version,
            updated_at,
        })
    }
}

/// A row of a replacement: each value decimal text or a JSON number, read exactly.
#[derive(ToSchema)]
#[schema(as = EarnRateBody)]
#[allow(dead_code)] // the document's view: the body is read from its JSON by `RatesChange::read`
pub struct EarnRateBody {
    /// Start of the range in SAR, from 0, at most 2 decimals: the first row's, then where
    /// the row before it ends.
    #[schema(format = "decimal", example = "0")]
    amount_from: String,
    /// End of the range in SAR, above its start, at most 2 decimals; null on the last row
    /// (and only there).
    #[schema(format = "decimal", example = "50", required)]
    amount_to: Option<String>,
    /// Points from 0 to 1000000000, at most 4 decimals.
    #[schema(format = "decimal", example = "5")]
    point_earn: String,
}

/// The body of a replacement: both keys required.
#[derive(ToSchema)]
#[schema(as = EarnRateTableBody)]
#[allow(dead_code)] // the document's view: the body is read from its JSON by `RatesChange::read`
pub struct EarnRateTableBody {
    /// 1 to 100 rows, in order (each key of a row required).
    rates: Vec<EarnRateBody>,
    /// The version the change was made from (the one read).
    version: i64,
}

/// The keys of a replacement's body, in the order they are checked.
pub const KEYS: [&str; 2] = ["rates", "version"];
/// The keys of a row.
pub const ROW_KEYS: [&str; 3] = ["amount_from", "amount_to", "point_earn"];
/// The most rows a table has.
pub const MAX_ROWS: usize = 100;

envelope::refusals! {
    /// Why a replacement is refused, checked in this order: the body's form, its keys,
    /// `rates` (the list, then each row in order, its keys in [`ROW_KEYS`]' order), the
    /// version.
    pub enum RatesRefusal in BackOffice {
        NotAnObject => 400 "NOT_AN_OBJECT", [body::NOT_AN_OBJECT];
        UnknownKey(key: String) => 400 "UNKNOWN_FIELD", "{key} is not a field of the earn-rate table";
        BadRates => 400 "INVALID_RATES", "rates must be a list of 1 to 100 rows";
        BadRow(row: usize) => 400 "INVALID_RATE_ROW",
            "rates[{row}] must be an object of amount_from, amount_to and point_earn";
        BadFrom(row: usize) => 400 "INVALID_AMOUNT_FROM",
            "rates[{row}].amount_from must be an amount of SAR from 0, with at most 2 decimals";
        /// A gap or an overlap with the row before.
        NotContiguous(row: usize, from: String) => 400 "RATES_NOT_CONTIGUOUS",
            "rates[{row}].amount_from must be {from}, where the row before it ends";
        BadTo(row: usize) => 400 "INVALID_AMOUNT_TO",
            "rates[{row}].amount_to must be an amount of SAR above its amount_from, with at most 2 decimals";
        OpenEnded(row: usize) => 400 "RATES_NOT_OPEN_ENDED",
            "rates[{row}].amount_to must be null: the last row is open-ended";
        BadEarn(row: usize) => 400 "INVALID_POINT_EARN",
            "rates[{row}].point_earn must be points from 0 to 1000000000, with at most 4 decimals";
        BadVersion => 400 "INVALID_VERSION", "version must be the integer version the change was made from";
        Stale(sent: i64, current: i64) => 409 "STALE_VERSION",
            "the earn-rate table is at version {current}, not {sent}: read it again and make the change on it";
    }
}

/// A replacement, read: the rows to store, each value an exact JSON number.
#[derive(Debug, Clone, PartialEq)]
pub struct RatesChange {
    pub rates: Vec<Rate>,
    pub version: i64,
}

impl RatesChange {
    pub fn read(body: &Value) -> Result<RatesChange, RatesRefusal> {
        let map = body::object(
            body,
            &KEYS,
            RatesRefusal::NotAnObject,
            RatesRefusal::UnknownKey,
        )?;
        let rows = map
            .get("rates")
            .and_then(Value::as_array)
            .filter(|rows| (1..=MAX_ROWS).contains(&rows.len()))
            .ok_or(RatesRefusal::BadRates)?;
        let mut rates = Vec::with_capacity(rows.len());
        let mut from_here: Option<BigDecimal> = None;
        for (i, row) in rows.iter().enumerate() {
            let row = row
                .as_object()
                .filter(|row| {
                    row.len() == ROW_KEYS.len() && ROW_KEYS.iter().all(|k| row.contains_key(*k))
                })
                .ok_or(RatesRefusal::BadRow(i))?;
            let from = body::amount(&row["amount_from"]).ok_or(RatesRefusal::BadFrom(i))?;
            if let Some(expected) = &from_here
                && expected != from.as_decimal()
            {
                return Err(RatesRefusal::NotContiguous(
                    i,
                    crate::decimal_text(expected),
                ));
            }
            let last = i + 1 == rows.len();
            let to = match (&row["amount_to"], last) {
                (Value::Null, true) => None,
                (_, true) => return Err(RatesRefusal::OpenEnded(i)),
                (to, false) => Some(
                    body::amount(to)
                        .filter(|to| to.as_decimal() > from.as_decimal())
                        .ok_or(RatesRefusal::BadTo(i))?,
                ),
            };
            let earn =
                body::points_from_zero(&row["point_earn"]).ok_or(RatesRefusal::BadEarn(i))?;
            from_here = to.as_ref().map(|to| to.as_decimal().clone());
            rates.push(Rate {
                amount_from: number(&from),
                amount_to: to.as_ref().map_or(Value::Null, number),
                point_earn: Value::Number(domain::decimal::to_number(&earn.normalized())),
            });
        }
        let version = map
            .get("version")
            .and_then(Value::as_i64)
            .filter(|v| *v >= 0)
            .ok_or(RatesRefusal::BadVersion)?;
        Ok(RatesChange { rates, version })
    }
}

/// An amount as the stored table writes it: an exact JSON number without trailing zeros.
fn number(amount: &Money) -> Value {
    Value::Number(domain::decimal::to_number(
        &amount.as_decimal().normalized(),
    ))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn each_refusal_in_its_order() {
        use RatesRefusal::*;
        let row = |f: Value, t: Value, e: Value| json!({"amount_from": f, "amount_to": t, "point_earn": e});
        let table = |rows: Vec<Value>| json!({"rates": rows, "version": 3});
        let cases = [
            (json!(null), NotAnObject),
            (json!({"rates": [], "v": 1}), UnknownKey("v".into())),
            (json!({"version": 1}), BadRates),
            (table(vec![]), BadRates),
            (table(vec![json!([0, null, 1])]), BadRow(0)),
            (
                table(vec![json!({"amount_from": 0, "point_earn": 1})]),
                BadRow(0),
            ),
            (
                table(vec![
                    json!({"amount_from": 0, "amount_to": null, "point_earn": 1, "x": 1}),
                ]),
                BadRow(0),
            ),
            (
                table(vec![row(json!(-1), json!(null), json!(1))]),
                BadFrom(0),
            ),
            (
                table(vec![row(json!(0.001), json!(null), json!(1))]),
                BadFrom(0),
            ),
            (
                table(vec![row(json!(null), json!(null), json!(1))]),
                BadFrom(0),
            ),
            (
                table(vec![row(json!(0), json!(50), json!(1))]),
                OpenEnded(0),
            ),
            (
                table(vec![
                    row(json!(0), json!(50), json!(1)),
                    row(json!(49.99), json!(null), json!(2)),
                ]),
                NotContiguous(1, "50".into()),
            ),
            (
                table(vec![
                    row(json!(0), json!(50), json!(1)),
                    row(json!(60), json!(null), json!(2)),
                ]),
                NotContiguous(1, "50".into()),
            ),
            (
                table(vec![
                    row(json!(10), json!(10), json!(1)),
                    row(json!(10), json!(null), json!(2)),
                ]),
                BadTo(0),
            ),
            (
                table(vec![
                    row(json!(0), json!(null), json!(1)),
                    row(json!(0), json!(null), json!(2)),
                ]),
                BadTo(0),
            ),
            (
                table(vec![row(json!(0), json!(null), json!(-1))]),
                BadEarn(0),
            ),
            (
                table(vec![row(json!(0), json!(null), json!("1.00001"))]),
                BadEarn(0),
            ),
            (
                json!({"rates": [row(json!(0), json!(null), json!(1))]}),
                BadVersion,
            ),
        ];
        for (body, refusal) in cases {
            assert_eq!(RatesChange::read(&body), Err(refusal), "{body}");
        }
    }

    #[test]
    fn a_table_is_stored_as_exact_numbers() {
        let change = RatesChange::read(&json!({"rates": [
            {"amount_from": "0", "amount_to": 49.5, "point_earn": 0},
            {"amount_from": 49.50, "amount_to": "100.25", "point_earn": "7.7500"},
            {"amount_from": "100.25", "amount_to": null, "point_earn": 30.1234}
        ], "version": 0}))
        .unwrap();
        assert_eq!(
            serde_json::to_string(&change.rates).unwrap(),
            concat!(
                r#"[{"amount_from":0,"amount_to":49.5,"point_earn":0},"#,
                r#"{"amount_from":49.5,"amount_to":100.25,"point_earn":7.75},"#,
                r#"{"amount_from":100.25,"amount_to":null,"point_earn":30.1234}]"#
            )
        );
        assert_eq!(change.version, 0);
    }
}
