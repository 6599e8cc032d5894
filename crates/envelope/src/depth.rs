//! A bound on how deeply a JSON body may nest, checked on the raw bytes before anything
//! parses them.
//!
//! Every body the services take is JSON (read as bytes, parsed by the route). The deepest
//! documented body nests three levels (`{"data": {…}}` of the payment webhook; an operator's
//! `logo_variants` is "any JSON" but a handful of levels in practice), so [`MAX_DEPTH`] = 32
//! is far above anything a client sends, and far below what would cost anything: serde_json
//! stops at 128 levels with its own error (which would then be the limit clients hit, by
//! accident), and recursive walks of a parsed value (PostgreSQL's `jsonb` included) are
//! safe at 32. A deeper body is a 400 in the route's envelope before any handler runs.

/// The deepest nesting of arrays and objects a body may have: `{"a": [1]}` is 2 deep.
pub const MAX_DEPTH: usize = 32;

/// The message of the 400 for a body nested deeper than [`MAX_DEPTH`]; it starts like the
/// other body errors (`Invalid JSON body: …`).
pub const MESSAGE: &str = "Invalid JSON body: nested deeper than 32 levels";

/// True when `body`, read as JSON, opens more than `max` arrays or objects inside one
/// another. Only bytes outside strings count (a `[` in a string is text), and a string ends
/// only at a quote that is not escaped (`"\\"` ends, `"\""` does not). The scan does not
/// validate: text that is not JSON is left to the route's parser, which refuses it anyway.
pub fn deeper_than(body: &[u8], max: usize) -> bool {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for &byte in body {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > max {
                    return true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nested(levels: usize) -> String {
        format!("{}1{}", "[".repeat(levels), "]".repeat(levels))
    }

    fn objects(levels: usize) -> String {
        format!("{}1{}", r#"{"a":"#.repeat(levels), "}".repeat(levels))
    }

    #[test]
    fn the_bound_is_inclusive() {
        assert!(!deeper_than(nested(32).as_bytes(), MAX_DEPTH));
        assert!(deeper_than(nested(33).as_bytes(), MAX_DEPTH));
        assert!(!deeper_than(objects(32).as_bytes(), MAX_DEPTH));
        assert!(deeper_than(objects(33).as_bytes(), MAX_DEPTH));
        assert!(MESSAGE.contains(&MAX_DEPTH.to_string()));
    }

    #[test]
    fn depth_is_nesting_not_count() {
        let siblings = format!("[{}]", vec!["[1]"; 1000].join(","));
        assert!(!deeper_than(siblings.as_bytes(), 2));
        assert!(deeper_than(siblings.as_bytes(), 1));
        assert!(!deeper_than(b"", 0));
        assert!(!deeper_than(b"12", 0));
        assert!(deeper_than(b"{}", 0));
    }

    #[test]
    fn brackets_in_strings_are_text() {
        let body = format!(r#"{{"a": "{}", "b": [1]}}"#, "[{".repeat(100));
        assert!(!deeper_than(body.as_bytes(), 2));
        // An escaped quote does not end the string; an escaped backslash before a quote does.
        let body = format!(r#"{{"a": "\" {} "}}"#, "[".repeat(100));
        assert!(!deeper_than(body.as_bytes(), 1));
        let body = format!(r#"{{"a": "\\", "b": {}1{}}}"#, "[".repeat(5), "]".repeat(5));
        assert!(deeper_than(body.as_bytes(), 5));
        assert!(!deeper_than(body.as_bytes(), 6));
        // Unicode (multi-byte UTF-8 never holds an ASCII byte) and \u escapes.
        let body = format!(r#"{{"مطاعم \u005b": "😀", "b": {}}}"#, nested(3));
        assert!(!deeper_than(body.as_bytes(), 4));
        assert!(deeper_than(body.as_bytes(), 3));
    }

    #[test]
    fn closers_without_openers_do_not_go_below_zero() {
        let body = format!("]]]]}}}}{}", nested(3));
        assert!(deeper_than(body.as_bytes(), 2));
        assert!(!deeper_than(body.as_bytes(), 3));
    }

    #[test]
    fn agrees_with_serde_json_on_what_it_parses() {
        // A value serde_json reads has exactly the depth the scan counts.
        for levels in [0, 1, 5, 31, 32, 33, 100] {
            let text = format!(r#"{{"s": "]]}}{{[\"", "v": {}}}"#, nested(levels));
            let value: serde_json::Value = serde_json::from_str(&text).unwrap();
            let depth = value_depth(&value);
            assert_eq!(depth, levels + 1);
            assert!(!deeper_than(text.as_bytes(), depth));
            assert!(deeper_than(text.as_bytes(), depth - 1));
        }
    }

    fn value_depth(value: &serde_json::Value) -> usize {
        match value {
            serde_json::Value::Array(items) => 1 + items.iter().map(value_depth).max().unwrap_or(0),
            serde_json::Value::Object(map) => 1 + map.values().map(value_depth).max().unwrap_or(0),
            _ => 0,
        }
    }
}
