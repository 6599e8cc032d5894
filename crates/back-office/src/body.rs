//! Reading a body's values exactly: decimals from JSON text or numbers, never through a
//! double.

use bigdecimal::{BigDecimal, Zero};
use domain::{Money, Points};
use serde_json::{Map, Value};

/// The refusal of a body that is no JSON object, on every back-office route with a body.
pub const NOT_AN_OBJECT: &str = "the body must be a JSON object";

/// The body's keys and values once it is a JSON object naming only `keys`: what every
/// back-office body is checked for first, in this order, each route refusing with its own
/// refusal (`not_an_object`, or `unknown_key` of the first key in the body not in `keys`).
pub fn object<'a, R>(
    body: &'a Value,
    keys: &[&str],
    not_an_object: R,
    unknown_key: impl FnOnce(String) -> R,
) -> Result<&'a Map<String, Value>, R> {
    let Value::Object(map) = body else {
        return Err(not_an_object);
    };
    if let Some(key) = map.keys().find(|key| !keys.contains(&key.as_str())) {
        return Err(unknown_key(key.clone()));
    }
    Ok(map)
}

/// A decimal sent as plain text (`"12.345"`) or as a JSON number (`12.345`, read as the
/// decimal it writes).
fn decimal(value: &Value) -> Option<BigDecimal> {
    match value {
        Value::String(text) => text.parse::<Points>().ok().map(Points::into_decimal),
        Value::Number(number) => domain::decimal::from_number(number).ok(),
        _ => None,
    }
}

/// The most points one offer may give or one adjustment may move: a typo's guard (an offer
/// of 10^100 points for 0.01 SAR is no price anyone means).
pub const MAX_POINTS: i64 = 1_000_000_000;

/// Points the back office takes: at most [`Points::TEXT_DECIMALS`] decimals (what the
/// balance shows, so that what an operator sets is what everyone reads) and at most
/// [`MAX_POINTS`] in size.
fn points(value: &Value) -> Option<BigDecimal> {
    decimal(value).filter(|points| {
        points.normalized().fractional_digit_count() <= Points::TEXT_DECIMALS
            && points.abs() <= MAX_POINTS
    })
}

/// A positive number of points.
pub fn positive_points(value: &Value) -> Option<BigDecimal> {
    points(value).filter(|points| *points > BigDecimal::zero())
}

/// A number of points from 0.
pub fn points_from_zero(value: &Value) -> Option<BigDecimal> {
    points(value).filter(|points| *points >= BigDecimal::zero())
}

/// A signed number of points other than 0.
pub fn nonzero_points(value: &Value) -> Option<BigDecimal> {
    points(value).filter(|points| !points.is_zero())
}

/// Text of 1 to `max` characters once trimmed, as trimmed; never a character that renders
/// as nothing or as no letter: a control character, a default-ignorable code point
/// (Unicode's set of what renders as nothing: zero-width spaces and joiners, bidirectional
/// marks, variation selectors, tags, the combining grapheme joiner, the Hangul fillers), a
/// format character (the interlinear annotation marks among them), a line or paragraph
/// separator, a private-use or an unassigned code point. So text that reads the same is the
/// same text.
pub fn text(value: &Value, max: usize) -> Option<String> {
    use icu_properties::props::{BinaryProperty, DefaultIgnorableCodePoint, GeneralCategory};
    let categories = icu_properties::CodePointMapData::<GeneralCategory>::new();
    let invisible = |c: char| {
        c.is_control()
            || DefaultIgnorableCodePoint::for_char(c)
            || matches!(
                categories.get(c),
                GeneralCategory::Format
                    | GeneralCategory::LineSeparator
                    | GeneralCategory::ParagraphSeparator
                    | GeneralCategory::PrivateUse
                    | GeneralCategory::Unassigned
            )
    };
    value
        .as_str()
        .map(str::trim)
        .filter(|text| !text.is_empty() && text.chars().count() <= max)
        .filter(|text| !text.chars().any(invisible))
        .map(str::to_owned)
}

/// A reference an operator gives (an adjustment's, a gift-code batch's): [`text`] in
/// Unicode's compatibility form (NFKC), each run of spaces inside it one space, so that two
/// references that read the same are one (`ticket-9` and the full-width `ｔｉｃｋｅｔ－９`; a
/// ligature and its letters; `ticket  9` and `ticket 9`). Letters of two scripts that look
/// alike (a Cyrillic `а` in a Latin word) stay two: NFKC does not join them.
pub fn reference(value: &Value, max: usize) -> Option<String> {
    let nfkc = icu_normalizer::ComposingNormalizerBorrowed::new_nfkc();
    let normal = nfkc.normalize(value.as_str()?);
    let spaced: Vec<&str> = normal.split(' ').filter(|word| !word.is_empty()).collect();
    text(&Value::String(spaced.join(" ")), max)
}

/// The largest price `point_offers.amount` (`NUMERIC(12, 2)`) holds.
fn max_amount() -> BigDecimal {
    BigDecimal::new(999_999_999_999_i64.into(), 2)
}

/// An amount of SAR: at least 0, at most two decimals (never rounded), at most
/// 9999999999.99; written with its two decimals.
pub fn amount(value: &Value) -> Option<Money> {
    decimal(value)
        .and_then(|amount| Money::new(amount).ok())
        .filter(|amount| *amount.as_decimal() <= max_amount())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn points_are_positive_exact_decimals_from_text_or_numbers() {
        let text = |v: Value| positive_points(&v).map(|p| p.normalized().to_plain_string());
        assert_eq!(text(json!("12.345")), Some("12.345".to_owned()));
        assert_eq!(text(json!(12.345)), Some("12.345".to_owned()));
        assert_eq!(text(json!("1000000000")), Some("1000000000".to_owned()));
        assert_eq!(text(json!("0.0001")), Some("0.0001".to_owned()));
        for refused in [
            json!("0"),
            json!(0),
            json!(-1),
            json!("1.00001"),
            json!("1000000000.0001"),
            json!("-1"),
            json!("1e3"),
            json!(" 1"),
            json!(null),
            json!(true),
            json!([1]),
        ] {
            assert_eq!(text(refused.clone()), None, "{refused}");
        }
    }

    #[test]
    fn text_is_trimmed_and_never_invisible() {
        assert_eq!(super::text(&json!(" a b "), 3), Some("a b".to_owned()));
        for refused in [
            json!(""),
            json!("  "),
            json!("abcd"),
            json!("a\u{0}"),
            json!("a\u{200b}b"),
            json!("a\u{2066}b"),
            json!("a\u{ad}b"),
            json!("a\u{fe0f}"),
            json!("a\u{e0041}"),
            // The combining grapheme joiner, a Hangul filler, a Mongolian variation selector.
            json!("a\u{34f}b"),
            json!("a\u{3164}b"),
            json!("a\u{180b}b"),
            json!(1),
        ] {
            assert_eq!(super::text(&refused, 3), None, "{refused}");
        }
    }

    #[test]
    fn references_that_read_the_same_are_one() {
        let reference = |text: &str| super::reference(&json!(text), 20);
        assert_eq!(reference("ticket-9"), Some("ticket-9".to_owned()));
        // Full-width letters and digits, a ligature, an ideographic space at the end.
        assert_eq!(reference("ｔｉｃｋｅｔ－９"), Some("ticket-9".to_owned()));
        assert_eq!(reference("\u{fb01}le-1\u{3000}"), Some("file-1".to_owned()));
        // Runs of spaces inside are one; a decomposed letter is the composed one.
        assert_eq!(reference("ticket  9"), Some("ticket 9".to_owned()));
        assert_eq!(reference("cafe\u{301}-1"), Some("caf\u{e9}-1".to_owned()));
        // The half-width Hangul filler is the Hangul filler once normalised: refused either way.
        for refused in [
            "ticket\u{ffa0}9",
            "ticket\u{34f}9",
            "ticket\u{180d}9",
            "ticket\u{fff9}9",
            "ticket\u{2028}9",
            "ticket\u{e000}9",
            "",
        ] {
            assert_eq!(reference(refused), None, "{refused:?}");
        }
    }

    #[test]
    fn amounts_keep_two_decimals_and_are_never_rounded() {
        let text = |v: Value| amount(&v).map(|a| a.to_text());
        assert_eq!(text(json!("15")), Some("15.00".to_owned()));
        assert_eq!(text(json!(0)), Some("0.00".to_owned()));
        assert_eq!(
            text(json!("9999999999.99")),
            Some("9999999999.99".to_owned())
        );
        for refused in [
            json!("15.001"),
            json!(-0.01),
            json!("10000000000"),
            json!("x"),
        ] {
            assert_eq!(text(refused.clone()), None, "{refused}");
        }
    }
}
