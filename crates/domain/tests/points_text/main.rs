//! Property tests of the points text (`Points::from_str` and `Points::to_text`).

mod checks;
#[path = "../../../../fuzz/replay.rs"]
mod replay;

use std::str::FromStr;

use bigdecimal::BigDecimal;
use bigdecimal::num_bigint::BigInt;
use domain::Points;
use proptest::prelude::*;

/// Plain decimal text: a sign, 1 to 30 integer digits (leading zeros included) and 0 to 30
/// decimals, or no integer digits at all (`.5`), or a trailing dot (`5.`).
fn plain_decimal() -> impl Strategy<Value = String> {
    (
        any::<bool>(),
        "[0-9]{0,30}",
        prop_oneof![Just(None), "[0-9]{0,30}".prop_map(Some)],
    )
        .prop_filter_map("no digits", |(negative, int, frac)| {
            let sign = if negative { "-" } else { "" };
            let text = match frac {
                Some(frac) => format!("{sign}{int}.{frac}"),
                None => format!("{sign}{int}"),
            };
            text.bytes().any(|b| b.is_ascii_digit()).then_some(text)
        })
}

/// Exact halves and near halves at the fifth decimal, where rounding direction shows:
/// `d.dddd5`, `d.dddd5000`, `d.dddd49999`, `d.dddd50001`, often with nines that carry.
fn near_half() -> impl Strategy<Value = String> {
    (
        any::<bool>(),
        prop_oneof!["[0-9]{1,6}", "9{1,6}", Just("0".to_owned())],
        prop_oneof!["[0-9]{4}", Just("9999".to_owned()), Just("0000".to_owned())],
        prop_oneof!["50{0,5}", "49{1,5}", "50{0,5}1", "4", "5", "6",],
    )
        .prop_map(|(negative, int, four, tail)| {
            let sign = if negative { "-" } else { "" };
            format!("{sign}{int}.{four}{tail}")
        })
}

/// A decimal built from an unscaled integer and a scale, as the database hands them over
/// (negative scales included: `12E+3`), and its plain text written here by hand.
fn unscaled_and_scale() -> impl Strategy<Value = (i128, i64)> {
    (any::<i128>(), -30i64..40)
}

fn plain_text_of(unscaled: i128, scale: i64) -> String {
    let sign = if unscaled < 0 { "-" } else { "" };
    let digits = unscaled.unsigned_abs().to_string();
    if scale <= 0 {
        let zeros = "0".repeat(usize::try_from(-scale).unwrap_or(0));
        return format!("{sign}{digits}{zeros}");
    }
    let scale = usize::try_from(scale).unwrap_or(0);
    let padded = format!("{digits:0>width$}", width = scale + 1);
    let (int, frac) = padded.split_at(padded.len() - scale);
    format!("{sign}{int}.{frac}")
}

proptest! {
    #[test]
    fn reading_any_text_never_panics_and_read_text_is_right(input in "\\PC{0,40}") {
        prop_assert_eq!(checks::check_input(&input), Ok(()));
    }

    #[test]
    fn reading_decimal_like_text_never_panics(input in "[-.0-9eE+ ]{0,40}") {
        prop_assert_eq!(checks::check_input(&input), Ok(()));
    }

    /// Short text over the characters a number is made of: read exactly when it is plain
    /// decimal text (`-` only in front, at most one dot, a digit somewhere). The fuzzer
    /// found `.-42133565` read as -0.042133565.
    #[test]
    fn only_plain_decimal_text_is_read(
        input in prop_oneof!["[-.0-9]{1,6}", "[-.]{1,3}[0-9]{1,4}", "[0-9]{0,2}[-.]{1,3}[0-9]{0,3}"],
    ) {
        let read = Points::from_str(&input).map(|p| p.to_text()).ok();
        prop_assert_eq!(read, checks::reference_text(&input), "{:?}", input);
    }

    #[test]
    fn plain_decimals_round_half_away_from_zero_to_four_places(input in plain_decimal()) {
        let points = Points::from_str(&input);
        prop_assert!(points.is_ok(), "{:?} was refused", input);
        prop_assert_eq!(checks::check_input(&input), Ok(()));
    }

    #[test]
    fn halves_go_away_from_zero(input in near_half()) {
        let text = Points::from_str(&input).map(|p| p.to_text());
        prop_assert_eq!(text.ok(), checks::reference_text(&input));
        prop_assert_eq!(checks::check_input(&input), Ok(()));
    }

    #[test]
    fn any_scale_is_written_plain((unscaled, scale) in unscaled_and_scale()) {
        let value = BigDecimal::new(BigInt::from(unscaled), scale);
        let text = Points::new(value.clone()).to_text();
        prop_assert_eq!(checks::check_text_of(&value, &text), Ok(()));
        let plain = plain_text_of(unscaled, scale);
        prop_assert_eq!(Some(text), checks::reference_text(&plain), "{}", plain);
    }

    #[test]
    fn negating_only_flips_the_sign(input in plain_decimal()) {
        let points = Points::from_str(&input).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let text = points.to_text();
        let negated = (-points).to_text();
        let expected = match text.strip_prefix('-') {
            Some(magnitude) => magnitude.to_owned(),
            None if text == "0" => text.clone(),
            None => format!("-{text}"),
        };
        prop_assert_eq!(negated, expected);
    }

    #[test]
    fn json_carries_the_text_and_reads_back_rounded(input in plain_decimal()) {
        let points = Points::from_str(&input).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let text = points.to_text();
        let json = serde_json::to_string(&points).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(&json, &format!("\"{text}\""));
        let back: Points = serde_json::from_str(&json).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(back.to_text(), text);
    }
}

/// The reference itself, on the cases the spec and the unit tests name, so that a wrong
/// reference cannot make the properties agree with a wrong implementation.
#[test]
fn the_reference_rounds_as_the_spec_says() {
    for (input, text) in [
        ("500.50000", "500.5"),
        ("100.0", "100"),
        ("-0.00004", "0"),
        ("-0.00005", "-0.0001"),
        ("1.23455", "1.2346"),
        ("1.234549999", "1.2345"),
        ("-1.23455", "-1.2346"),
        ("9.99995", "10"),
        ("-99.99995", "-100"),
        ("0007.10", "7.1"),
        (".5", "0.5"),
        ("5.", "5"),
    ] {
        assert_eq!(
            checks::reference_text(input).as_deref(),
            Some(text),
            "{input}"
        );
    }
    for not_plain in ["", "-", ".", "1e5", "1.2.3", "+1", " 1"] {
        assert_eq!(checks::reference_text(not_plain), None, "{not_plain:?}");
    }
    assert!(checks::check_shape("1.50").is_err());
    assert!(checks::check_shape("1.").is_err());
    assert!(checks::check_shape("1E+5").is_err());
    assert!(checks::check_shape("-0").is_err());
    assert!(checks::check_shape("01").is_err());
    assert!(checks::check_shape("1.23456").is_err());
    let half = BigDecimal::from_str("0.00005").unwrap();
    assert!(checks::check_text_of(&half, "0").is_err());
    assert!(checks::check_text_of(&half, "0.0001").is_ok());
    assert_eq!(plain_text_of(-1205, 2), "-12.05");
    assert_eq!(plain_text_of(5, 3), "0.005");
    assert_eq!(plain_text_of(12, -3), "12000");
}

/// What the fuzzer found, kept fixed whatever the random cases above draw: bigdecimal read
/// a minus sign after the dot as part of the decimals (`.-5` was -0.05).
#[test]
fn a_minus_sign_is_read_only_in_front() {
    for bad in [".-5", ".-42133565", ".-0", "1-", "-", "-.", "--1", "1.2.3"] {
        assert!(Points::from_str(bad).is_err(), "{bad:?} was read");
    }
    for (good, text) in [("-.5", "-0.5"), (".5", "0.5"), ("-0", "0"), ("5.", "5")] {
        assert_eq!(
            Points::from_str(good).map(|p| p.to_text()).ok().as_deref(),
            Some(text)
        );
    }
}

/// The fuzz target `points_text` on its seeds (and local corpus), in `make test`.
#[test]
fn the_fuzz_targets_seeds_pass_its_checks() {
    replay::replay_fuzz_inputs("points_text", checks::check_fuzz_input);
}
