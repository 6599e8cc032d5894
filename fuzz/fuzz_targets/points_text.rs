//! The points text (`domain::Points`, `shared/DESIGN.md`: rounded half away from zero to 4
//! decimals, then trailing zeros and a trailing dot removed). Text input: reading never
//! panics, and what is read is written as a digit-by-digit reference rounds it. Any input
//! also makes a decimal from an unscaled integer and a scale (as the database hands them
//! over): its text has no exponent, no trailing zero or dot, and reads back as the value
//! rounded to 4 places half away from zero (checked with exact arithmetic). The assertions
//! are the property tests' own: crates/domain/tests/points_text/checks.rs.

#![no_main]

use bigdecimal::BigDecimal;
use bigdecimal::num_bigint::BigInt;
use domain::Points;
use libfuzzer_sys::fuzz_target;

#[allow(dead_code)]
#[path = "../../crates/domain/tests/points_text/checks.rs"]
mod checks;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data)
        && let Err(problem) = checks::check_input(text)
    {
        panic!("{problem}");
    }
    // First byte: the scale (-64 to 63, the range NUMERIC values take in practice and
    // beyond); the rest, up to 64 bytes: the unscaled integer, signed, big-endian.
    if let Some((scale, digits)) = data.split_first() {
        let scale = i64::from(i8::from_ne_bytes([*scale]) / 2);
        let unscaled = BigInt::from_signed_bytes_be(&digits[..digits.len().min(64)]);
        let value = BigDecimal::new(unscaled, scale);
        let text = Points::new(value.clone()).to_text();
        if let Err(problem) = checks::check_text_of(&value, &text) {
            panic!("{problem}");
        }
    }
});
