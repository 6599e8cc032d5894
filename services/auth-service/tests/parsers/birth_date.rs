//! Property tests of the `birth_date` reader.

use auth_service::birth_date::{self, Unreadable};
use chrono::{Datelike, Duration, NaiveDate, NaiveDateTime, NaiveTime};
use proptest::prelude::*;
use proptest::sample::select;
use serde_json::{Number, Value, json};

use super::any_json;
use super::birth_date_checks::{check_date, check_value, civil_date, epoch_date};

/// Any date of the years 0000 to 9999, often a plausible birthday.
fn date() -> impl Strategy<Value = NaiveDate> {
    prop_oneof![(0i32..=9999, 1u32..=366), (1900i32..=2030, 1u32..=366),]
        .prop_filter_map("no such day", |(year, day)| {
            NaiveDate::from_yo_opt(year, day)
        })
}

fn time() -> impl Strategy<Value = NaiveTime> {
    (0u32..24, 0u32..60, 0u32..60)
        .prop_filter_map("no such time", |(h, m, s)| NaiveTime::from_hms_opt(h, m, s))
}

/// A zone offset in minutes east of UTC, under a day.
fn offset() -> impl Strategy<Value = i64> {
    prop_oneof![
        -(23i64 * 60 + 59)..=(23 * 60 + 59),
        select(vec![0i64, 60, -60, 180, 330, -480])
    ]
}

fn offset_text(minutes: i64, colon: bool) -> String {
    let sign = if minutes < 0 { '-' } else { '+' };
    let (h, m) = (minutes.abs() / 60, minutes.abs() % 60);
    if colon {
        format!("{sign}{h:02}:{m:02}")
    } else {
        format!("{sign}{h:02}{m:02}")
    }
}

/// The UTC date of a local date and time at an offset, or unreadable outside 0000 to 9999.
fn utc_date(local: NaiveDateTime, offset_minutes: i64) -> Result<Option<NaiveDate>, Unreadable> {
    let utc = local - Duration::minutes(offset_minutes);
    if (0..=9999).contains(&utc.year()) {
        Ok(Some(utc.date()))
    } else {
        Err(Unreadable)
    }
}

fn text(s: impl Into<String>) -> Value {
    Value::String(s.into())
}

fn fail(e: String) -> TestCaseError {
    TestCaseError::fail(e)
}

proptest! {
    #[test]
    fn any_text_never_panics_and_what_is_read_is_a_date(s in prop_oneof!["\\PC{0,40}", "[\\x00-\\x7f]{0,30}"]) {
        let _ = check_value(&text(s)).map_err(fail)?;
    }

    #[test]
    fn any_json_value_never_panics_and_what_is_read_is_a_date(value in any_json()) {
        let _ = check_value(&value).map_err(fail)?;
    }

    #[test]
    fn date_like_text_never_panics(
        s in concat!(
            "[0-9]{4}[-/.][0-9]{1,2}[-/.][0-9]{1,2}",
            "([ T][0-9]{2}:[0-9]{2}(:[0-9]{2})?)?",
            "( ?[+-][0-9]{2}:?[0-9]{2}| [A-Za-z]{3})?",
        )
    ) {
        let _ = check_value(&text(s)).map_err(fail)?;
    }

    /// dateparser 0.3.1 panics (chrono's `FixedOffset::east`) on an offset of 24 hours or
    /// more; the reader answers unreadable instead.
    #[test]
    fn an_offset_of_a_day_or_more_is_unreadable_not_a_crash(
        day in date(),
        time in prop::option::of(time()),
        hours in 24u32..100,
        minutes in 0u32..60,
        sign in select(vec!['+', '-']),
        colon in any::<bool>(),
        space in any::<bool>(),
    ) {
        let at = time.map(|t| format!(" {}", t.format("%H:%M:%S"))).unwrap_or_default();
        let zone = if colon {
            format!("{sign}{hours:02}:{minutes:02}")
        } else {
            format!("{sign}{hours:02}{minutes:02}")
        };
        let input = format!("{}{at}{}{zone}", day.format("%Y-%m-%d"), if space { " " } else { "" });
        let read = check_value(&text(input.clone())).map_err(fail)?;
        prop_assert_eq!(read, Err(Unreadable), "{}", input);
    }

    #[test]
    fn an_iso_date_reads_as_itself(day in date(), pad in "[ \\t\\n]{0,2}") {
        let input = format!("{pad}{}{pad}", day.format("%Y-%m-%d"));
        prop_assert_eq!(birth_date::parse(&text(input)), Ok(Some(day)));
        check_date(day).map_err(fail)?;
    }

    #[test]
    fn other_date_forms_read_as_that_date(
        day in date(),
        form in select(vec!["%Y/%m/%d", "%B %-d, %Y", "%b %-d, %Y", "%-d %B %Y"]),
    ) {
        let input = day.format(form).to_string();
        prop_assert_eq!(birth_date::parse(&text(input.clone())), Ok(Some(day)), "{}", input);
    }

    #[test]
    fn a_time_with_an_offset_reads_as_the_utc_date(
        day in date(), time in time(), minutes in offset(), colon in any::<bool>(),
        form in select(vec!["%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S ", "%Y-%m-%dT%H:%M:%S%.3f"]),
    ) {
        let local = day.and_time(time);
        let colon = colon || form.contains('T');
        let input = format!("{}{}", local.format(form), offset_text(minutes, colon));
        prop_assert_eq!(birth_date::parse(&text(input.clone())), utc_date(local, minutes), "{}", input);
        let _ = check_value(&text(input)).map_err(fail)?;
    }

    #[test]
    fn rfc_2822_reads_as_the_utc_date(day in date(), time in time(), minutes in offset()) {
        prop_assume!(day.year() >= 1000);
        let local = day.and_time(time);
        let input = format!("{} {}", local.format("%a, %-d %b %Y %H:%M:%S"), offset_text(minutes, false));
        prop_assert_eq!(birth_date::parse(&text(input.clone())), utc_date(local, minutes), "{}", input);
    }

    /// A date with a zone and no time is that zone's midnight, whatever the clock says.
    #[test]
    fn a_date_with_a_zone_and_no_time_is_that_zones_midnight(
        day in date(), minutes in offset(), colon in any::<bool>(), space in any::<bool>(),
    ) {
        let separator = if space { " " } else { "" };
        let input = format!("{}{separator}{}", day.format("%Y-%m-%d"), offset_text(minutes, colon));
        let midnight = day.and_time(NaiveTime::MIN);
        prop_assert_eq!(
            birth_date::parse(&text(input.clone())),
            utc_date(midnight, minutes),
            "{}",
            input
        );
    }

    #[test]
    fn a_number_is_epoch_milliseconds(
        ms in prop_oneof![
            -62_167_219_200_000i64..=253_402_300_799_999,
            -2_208_988_800_000i64..=1_900_000_000_000,
            -8_640_000_000_000_000i64..=8_640_000_000_000_000,
            any::<i64>(),
        ],
    ) {
        let expected = epoch_date(ms).ok_or(Unreadable).map(Some);
        prop_assert_eq!(birth_date::parse(&json!(ms)), expected);
        if let Some(float) = Number::from_f64(ms as f64).filter(|_| ms.unsigned_abs() < 1 << 53) {
            // The same instant written `641520000000.0`.
            prop_assert_eq!(birth_date::parse(&Value::Number(float)), expected);
        }
        let _ = check_value(&json!(ms)).map_err(fail)?;
    }

    #[test]
    fn unix_timestamp_text_is_seconds_or_milliseconds(
        seconds in 1_000_000_000i64..=9_999_999_999,
        millis in 0i64..1000,
    ) {
        prop_assert_eq!(birth_date::parse(&text(seconds.to_string())), Ok(epoch_date(seconds * 1000)));
        let ms = seconds * 1000 + millis;
        if ms <= 9_999_999_999_999 {
            prop_assert_eq!(birth_date::parse(&text(ms.to_string())), Ok(epoch_date(ms)));
        }
    }
}

#[test]
fn null_clears_and_blank_or_other_types_are_unreadable() {
    assert_eq!(check_value(&Value::Null), Ok(Ok(None)));
    for bad in [
        text(""),
        text(" \t\n "),
        json!(true),
        json!([]),
        json!({}),
        json!(["1990-05-01"]),
    ] {
        assert_eq!(check_value(&bad), Ok(Err(Unreadable)), "{bad}");
    }
}

/// The independent calendar arithmetic, pinned on known days so that it cannot agree with
/// a wrong reader by being wrong the same way.
#[test]
fn the_reference_calendar_is_right() {
    let ymd = |y, m, d| NaiveDate::from_ymd_opt(y, m, d);
    assert_eq!(civil_date(0), ymd(1970, 1, 1));
    assert_eq!(civil_date(-1), ymd(1969, 12, 31));
    assert_eq!(civil_date(11_016), ymd(2000, 2, 29));
    assert_eq!(civil_date(-719_528), ymd(0, 1, 1));
    assert_eq!(civil_date(-719_529), None);
    assert_eq!(civil_date(2_932_896), ymd(9999, 12, 31));
    assert_eq!(civil_date(2_932_897), None);
    assert_eq!(epoch_date(641_520_000_000), ymd(1990, 5, 1));
    assert_eq!(epoch_date(-1), ymd(1969, 12, 31));
    assert!(check_date(NaiveDate::MAX).is_err());
    assert!(check_date(NaiveDate::MIN).is_err());
}
