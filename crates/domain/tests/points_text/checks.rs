//! What the points text must satisfy (`docs/design.md`: rounded half away from zero to 4
//! decimals, then trailing zeros and a trailing dot removed). Shared by the property tests
//! and the fuzz target `fuzz/fuzz_targets/points_text.rs`, so both assert the same thing.

use std::str::FromStr;

use bigdecimal::BigDecimal;
use bigdecimal::num_bigint::BigInt;
use domain::Points;

/// The text for plain decimal input (`-?digits.digits`, either side may be empty but not
/// both), computed digit by digit without bigdecimal: the magnitude is cut after the fourth
/// decimal and goes up by one unit there when the fifth decimal is 5 or more (half away from
/// zero), then trailing zeros, a trailing dot and leading zeros go, and zero has no sign.
/// `None` when `plain` is not of that form.
pub fn reference_text(plain: &str) -> Option<String> {
    let (negative, magnitude) = match plain.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, plain),
    };
    let (int, frac) = magnitude.split_once('.').unwrap_or((magnitude, ""));
    if (int.is_empty() && frac.is_empty())
        || !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit())
    {
        return None;
    }
    // |x| * 10^4, truncated, one decimal digit per element.
    let frac = frac.as_bytes();
    let mut digits: Vec<u8> = int.bytes().map(|b| b - b'0').collect();
    digits.extend((0..4).map(|i| frac.get(i).map_or(0, |b| b - b'0')));
    if frac.get(4).is_some_and(|b| *b >= b'5') {
        let mut i = digits.len();
        loop {
            if i == 0 {
                digits.insert(0, 1);
                break;
            }
            i -= 1;
            if digits[i] == 9 {
                digits[i] = 0;
            } else {
                digits[i] += 1;
                break;
            }
        }
    }
    let text = |ds: &[u8]| -> String { ds.iter().map(|d| char::from(b'0' + d)).collect() };
    let split = digits.len() - 4;
    let int_text = text(&digits[..split]);
    let int_text = match int_text.trim_start_matches('0') {
        "" => "0",
        trimmed => trimmed,
    };
    let frac_text = text(&digits[split..]);
    let frac_text = frac_text.trim_end_matches('0');
    let magnitude = if frac_text.is_empty() {
        int_text.to_owned()
    } else {
        format!("{int_text}.{frac_text}")
    };
    Some(if magnitude == "0" || !negative {
        magnitude
    } else {
        format!("-{magnitude}")
    })
}

/// The shape of the text: an optional `-`, an integer part without leading zeros, and at
/// most four decimals whose last is not 0; no exponent, no `+`, no `-0`.
pub fn check_shape(text: &str) -> Result<(), String> {
    let magnitude = text.strip_prefix('-').unwrap_or(text);
    let (int, frac) = match magnitude.split_once('.') {
        Some((int, frac)) => (int, Some(frac)),
        None => (magnitude, None),
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(int) || (int.len() > 1 && int.starts_with('0')) {
        return Err(format!("{text:?}: integer part {int:?} is not plain"));
    }
    if let Some(frac) = frac
        && (!digits(frac) || frac.len() > 4 || frac.ends_with('0'))
    {
        return Err(format!(
            "{text:?}: decimals {frac:?} are not 1 to 4 digits ending in non-zero"
        ));
    }
    if text.starts_with('-') && magnitude == "0" {
        return Err(format!("{text:?}: negative zero"));
    }
    Ok(())
}

/// `text` is the points text of `value`: well formed, reads back as `value` rounded to 4
/// decimals half away from zero (checked with exact decimal arithmetic: it is within half
/// a unit of the fourth decimal, and on an exact half it is the one farther from zero), and
/// is a fixed point of parse-then-format.
pub fn check_text_of(value: &BigDecimal, text: &str) -> Result<(), String> {
    check_shape(text)?;
    let back = Points::from_str(text).map_err(|e| format!("{text:?} does not read back: {e}"))?;
    let back = back.as_decimal();
    let half_unit = BigDecimal::new(5.into(), 5);
    let distance = (back - value).abs();
    if distance > half_unit {
        return Err(format!(
            "{text:?} is {distance} away from {value}, more than 0.00005"
        ));
    }
    if distance == half_unit && back.abs() < value.abs() {
        return Err(format!(
            "{text:?} rounds the half {value} towards zero, not away from it"
        ));
    }
    let again = Points::new(back.clone()).to_text();
    if again != text {
        return Err(format!(
            "{text:?} is not stable: read back and written it is {again:?}"
        ));
    }
    Ok(())
}

/// Everything for one input string: reading it never panics; if it is read, its text
/// passes [`check_text_of`] and equals [`reference_text`].
pub fn check_input(input: &str) -> Result<(), String> {
    let Ok(points) = Points::from_str(input) else {
        return Ok(());
    };
    let text = points.to_text();
    check_text_of(points.as_decimal(), &text)?;
    match reference_text(input) {
        Some(expected) if expected == text => Ok(()),
        expected => Err(format!(
            "{input:?} was read and written as {text:?}; digit by digit it is {expected:?}"
        )),
    }
}

/// One input of the fuzz target `points_text`, checked exactly as the target checks it (the
/// target calls this; `main.rs` replays the target's seeds and corpus through it). As text,
/// when it is UTF-8: [`check_input`]. As a decimal: the first byte is the scale (-64 to 63,
/// the range NUMERIC values take in practice and beyond), the rest, up to 64 bytes, the
/// unscaled integer, signed, big-endian: [`check_text_of`] its text.
pub fn check_fuzz_input(data: &[u8]) -> Result<(), String> {
    if let Ok(text) = std::str::from_utf8(data) {
        check_input(text)?;
    }
    if let Some((scale, digits)) = data.split_first() {
        let scale = i64::from(i8::from_ne_bytes([*scale]) / 2);
        let unscaled = BigInt::from_signed_bytes_be(&digits[..digits.len().min(64)]);
        let value = BigDecimal::new(unscaled, scale);
        let text = Points::new(value.clone()).to_text();
        check_text_of(&value, &text)?;
    }
    Ok(())
}
