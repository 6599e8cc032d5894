//! `birth_date` as the profile route reads it: "any value a standard date parser reads",
//! stored as the UTC date. Strings go through `dateparser` (RFC 3339, RFC 2822, ISO dates,
//! `2021/05/01`, `May 1, 2021`, times with or without zones, unix timestamps...), with
//! naive times read as UTC; a JSON number is milliseconds since the epoch, as a JavaScript
//! `Date` reads it. `null` clears; anything else, the empty string included, is invalid.
//! A date with a zone but no time (`2021-05-01 +0800`) is that zone's midnight. A date
//! outside the years 0000 to 9999 has no `YYYY-MM-DD` form (nor, before 4713 BC, a
//! PostgreSQL `date`), so it is invalid too.

use std::ops::RangeInclusive;
use std::panic;

use chrono::{DateTime, Datelike, NaiveDate, NaiveTime, Utc};
use serde_json::Value;

/// A value no date parser reads: the profile route answers
/// [`crate::profile_update::ProfileRefusal::InvalidBirthDate`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unreadable;

/// The years that `YYYY-MM-DD` writes.
pub const YEARS: RangeInclusive<i32> = 0..=9999;

/// `Ok(None)` clears the date.
pub fn parse(value: &Value) -> Result<Option<NaiveDate>, Unreadable> {
    let date = read(value)?;
    match date {
        Some(d) if !YEARS.contains(&d.year()) => Err(Unreadable),
        _ => Ok(date),
    }
}

fn read(value: &Value) -> Result<Option<NaiveDate>, Unreadable> {
    match value {
        Value::Null => Ok(None),
        Value::String(s) => {
            let s = s.trim();
            if s.is_empty() {
                return Err(Unreadable);
            }
            // dateparser panics on a zone offset of 24 hours or more (`2021-05-01 +9900`,
            // chrono's `FixedOffset::east`): such text is unreadable, not a crash.
            panic::catch_unwind(|| dateparser::parse_with(s, &Utc, NaiveTime::MIN))
                .map_err(|_| Unreadable)?
                .map(|d| Some(d.date_naive()))
                .map_err(|_| Unreadable)
        }
        Value::Number(n) => n
            .as_i64()
            .or_else(|| {
                n.as_f64()
                    .filter(|f| f.fract() == 0.0 && f.abs() < 8.64e15)
                    .map(|f| f as i64)
            })
            .and_then(DateTime::from_timestamp_millis)
            .map(|d| Some(d.date_naive()))
            .ok_or(Unreadable),
        _ => Err(Unreadable),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn date(v: Value) -> Option<String> {
        parse(&v).ok().flatten().map(|d| d.to_string())
    }

    #[test]
    fn common_forms_read_as_the_utc_date() {
        assert_eq!(date(json!("1990-05-01")), Some("1990-05-01".into()));
        assert_eq!(
            date(json!("1990-05-01T23:30:00Z")),
            Some("1990-05-01".into())
        );
        // 01:30 in Riyadh is the evening before in UTC.
        assert_eq!(
            date(json!("1990-05-02T01:30:00+03:00")),
            Some("1990-05-01".into())
        );
        assert_eq!(
            date(json!("Tue, 1 May 1990 10:00:00 +0000")),
            Some("1990-05-01".into())
        );
        assert_eq!(date(json!("1990/05/01")), Some("1990-05-01".into()));
        assert_eq!(date(json!("May 1, 1990")), Some("1990-05-01".into()));
        assert_eq!(date(json!(641520000000_i64)), Some("1990-05-01".into()));
    }

    #[test]
    fn null_clears_and_junk_is_invalid() {
        assert_eq!(parse(&json!(null)), Ok(None));
        for bad in [
            json!(""),
            json!("   "),
            json!("not a date"),
            json!("1990-02-30"),
            json!(true),
            json!([]),
            json!({}),
        ] {
            assert_eq!(parse(&bad), Err(Unreadable), "{bad}");
        }
    }
}
