//! What any answer of the `birth_date` reader must satisfy. Shared by the property tests and
//! the fuzz target `fuzz/fuzz_targets/birth_date.rs`.

use auth_service::birth_date::{self, Unreadable};
use chrono::{Datelike, NaiveDate};
use serde_json::Value;

/// The calendar date `days` days after 1970-01-01, by Howard Hinnant's civil-from-days
/// arithmetic (not chrono's timestamp code); `None` outside the years 0000 to 9999.
pub fn civil_date(days: i64) -> Option<NaiveDate> {
    let z = days.checked_add(719_468)?;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    if !(0..=9999).contains(&year) {
        return None;
    }
    NaiveDate::from_ymd_opt(
        i32::try_from(year).ok()?,
        u32::try_from(month).ok()?,
        u32::try_from(day).ok()?,
    )
}

/// The UTC date of an instant `ms` milliseconds after the epoch, as a JavaScript `Date`
/// reads a number; `None` outside the years 0000 to 9999.
pub fn epoch_date(ms: i64) -> Option<NaiveDate> {
    civil_date(ms.div_euclid(86_400_000))
}

/// An accepted date: in the years `YYYY-MM-DD` writes, and written so it reads back as
/// itself (the profile answers `YYYY-MM-DD`, and the app may send that text back).
pub fn check_date(date: NaiveDate) -> Result<(), String> {
    let text = date.format("%Y-%m-%d").to_string();
    let shape = text.len() == 10
        && text.bytes().enumerate().all(|(i, b)| {
            if i == 4 || i == 7 {
                b == b'-'
            } else {
                b.is_ascii_digit()
            }
        });
    if !shape {
        return Err(format!("{date:?} is written {text:?}, not YYYY-MM-DD"));
    }
    match birth_date::parse(&Value::String(text.clone())) {
        Ok(Some(back)) if back == date => Ok(()),
        back => Err(format!("{text:?} reads back as {back:?}")),
    }
}

/// Reads `value` (which must not panic) and checks the answer: null and only null clears;
/// blank text is unreadable; an accepted date passes [`check_date`]; an integral number is
/// the UTC date of that many milliseconds, or unreadable outside the years 0000 to 9999.
pub fn check_value(value: &Value) -> Result<Result<Option<NaiveDate>, Unreadable>, String> {
    let read = birth_date::parse(value);
    let fail = |what: &str| Err(format!("{value}: {what}, got {read:?}"));
    match (value, &read) {
        (Value::Null, Ok(None)) => {}
        (Value::Null, _) => return fail("null must clear"),
        (_, Ok(None)) => return fail("only null clears"),
        (_, Ok(Some(date))) => check_date(*date).map_err(|e| format!("{value}: {e}"))?,
        (_, Err(Unreadable)) => {}
    }
    match value {
        Value::String(s) if s.trim().is_empty() && read.is_ok() => return fail("blank text"),
        Value::Bool(_) | Value::Array(_) | Value::Object(_) if read.is_ok() => {
            return fail("not a string, number or null");
        }
        Value::Number(n) => {
            let ms = n.as_i64().or_else(|| {
                n.as_f64()
                    .filter(|f| f.fract() == 0.0 && f.abs() < 8.64e15)
                    .map(|f| f as i64)
            });
            if let Some(ms) = ms {
                let expected = epoch_date(ms).ok_or(Unreadable).map(Some);
                if read != expected {
                    return Err(format!("{value}: expected {expected:?}, got {read:?}"));
                }
            }
        }
        _ => {}
    }
    if let Ok(Some(date)) = read
        && !(0..=9999).contains(&date.year())
    {
        return fail("year outside 0000 to 9999");
    }
    Ok(read)
}

/// One input of the fuzz target `birth_date`, checked exactly as the target checks it (the
/// target calls this; `main.rs` replays the target's seeds and corpus through it): as a JSON
/// string's text when it is UTF-8, and as that JSON value when it is JSON.
pub fn check_fuzz_input(data: &[u8]) -> Result<(), String> {
    if let Ok(text) = std::str::from_utf8(data) {
        let _answer = check_value(&Value::String(text.to_owned()))?;
    }
    if let Ok(value) = serde_json::from_slice::<Value>(data) {
        let _answer = check_value(&value)?;
    }
    Ok(())
}
