//! How the JSON log layer keeps a span's fields until a line lists them: as the text of a
//! JSON object, each value written once, straight from the span.
//!
//! tracing-subscriber's own `JsonFields` gathers the fields into a map of `serde_json`
//! values and writes the map out; on every later `record` it parses its own text back into a
//! map, adds the new fields and writes it all again. A request's root span is made on every
//! request and recorded again when it ends (with an exporter), though most requests never
//! write a line; that gathering and re-parsing was most of what the log layer cost a request.
//! Here a later field is appended to the text instead: should a field be recorded twice, the
//! line shows the later value (the JSON event formatter reads the text with `serde_json`,
//! which keeps the last of repeated keys).

use std::fmt::{self, Write as _};

use tracing::field::{Field, Visit};
use tracing_subscriber::field::RecordFields;
use tracing_subscriber::fmt::FormatFields;
use tracing_subscriber::fmt::FormattedFields;
use tracing_subscriber::fmt::format::Writer;

/// The span field formatter of the JSON log layer.
#[derive(Debug, Default, Clone, Copy)]
pub struct JsonSpanFields;

impl<'writer> FormatFields<'writer> for JsonSpanFields {
    fn format_fields<R: RecordFields>(
        &self,
        mut writer: Writer<'writer>,
        fields: R,
    ) -> fmt::Result {
        let mut text = String::with_capacity(256);
        text.push('{');
        let mut object = Object {
            text: &mut text,
            empty: true,
        };
        fields.record(&mut object);
        text.push('}');
        writer.write_str(&text)
    }

    fn add_fields(
        &self,
        current: &'writer mut FormattedFields<Self>,
        fields: &tracing::span::Record<'_>,
    ) -> fmt::Result {
        let text = &mut current.fields;
        // The text is always an object this formatter wrote; an empty one means no fields yet.
        if text.ends_with('}') {
            text.pop();
        } else {
            text.push('{');
        }
        let empty = text.len() == 1;
        fields.record(&mut Object { text, empty });
        text.push('}');
        Ok(())
    }
}

/// Appends `"name":value` pairs to an object's text.
struct Object<'a> {
    text: &'a mut String,
    empty: bool,
}

impl Object<'_> {
    fn key(&mut self, field: &Field) {
        if !self.empty {
            self.text.push(',');
        }
        self.empty = false;
        push_string(self.text, field.name());
        self.text.push(':');
    }
}

impl Visit for Object<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.key(field);
        push_string(self.text, value);
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.key(field);
        push_string(self.text, &format!("{value:?}"));
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.key(field);
        let _ = write!(self.text, "{value}");
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.key(field);
        let _ = write!(self.text, "{value}");
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.key(field);
        self.text.push_str(if value { "true" } else { "false" });
    }

    fn record_f64(&mut self, field: &Field, value: f64) {
        self.key(field);
        // JSON has no NaN or infinity: those go as text, as serde_json's `Value` would not.
        match serde_json::Number::from_f64(value) {
            Some(number) => {
                let _ = write!(self.text, "{number}");
            }
            None => push_string(self.text, &value.to_string()),
        }
    }
}

/// `value` as a JSON string, escaped by serde_json when it needs escaping. Most values (a
/// method, a route, a path, an id) need none, and are copied between quotes as they are.
pub(crate) fn push_string(text: &mut String, value: &str) {
    let plain = value.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\');
    if plain {
        text.reserve(value.len() + 2);
        text.push('"');
        text.push_str(value);
        text.push('"');
        return;
    }
    match serde_json::to_string(value) {
        Ok(quoted) => text.push_str(&quoted),
        // Serialising a string cannot fail; if it ever did, the field is dropped as null
        // rather than leaving the object unreadable.
        Err(_) => text.push_str("null"),
    }
}

#[cfg(test)]
mod tests {

    use tracing_subscriber::layer::SubscriberExt;

    /// The lines a JSON log layer with [`super::JsonSpanFields`] writes while `f` runs.
    fn lines(f: impl FnOnce()) -> Vec<serde_json::Value> {
        let sink = crate::test_sink::Sink::default();
        let layer = tracing_subscriber::fmt::layer()
            .json()
            .with_span_list(true)
            .with_current_span(false)
            .flatten_event(true)
            .fmt_fields(super::JsonSpanFields)
            .with_writer(sink.clone());
        let subscriber = tracing_subscriber::registry().with(layer);
        tracing::subscriber::with_default(subscriber, f);
        sink.lines()
            .iter()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect()
    }

    proptest::proptest! {
        /// The copy without escaping writes exactly what serde_json writes, whatever the text.
        #[test]
        fn a_string_is_written_as_serde_json_writes_it(value in "(?s).{0,40}", plain in "[ -~]{0,40}") {
            for value in [value, plain] {
                let mut text = String::new();
                super::push_string(&mut text, &value);
                proptest::prop_assert_eq!(text, serde_json::to_string(&value).unwrap());
            }
        }
    }

    #[test]
    fn a_line_lists_its_spans_fields_with_their_values() {
        let lines = lines(|| {
            let span = tracing::info_span!(
                "HTTP request",
                text = "a \"quoted\"\n\\ line",
                number = -7_i64,
                big = u64::MAX,
                flag = true,
                ratio = 0.25,
                odd = f64::NAN,
                debug = ?("x", 1),
                later = tracing::field::Empty,
            );
            span.in_scope(|| tracing::info!("before"));
            span.record("later", 5_u64);
            span.record("flag", false);
            span.in_scope(|| tracing::info!("after"));
            let bare = tracing::info_span!("bare", late = tracing::field::Empty);
            bare.record("late", "set");
            bare.in_scope(|| tracing::info!("in bare"));
        });
        assert_eq!(lines.len(), 3, "{lines:?}");
        let before = &lines[0]["spans"][0];
        assert_eq!(before["name"], "HTTP request");
        assert_eq!(before["text"], "a \"quoted\"\n\\ line");
        assert_eq!(before["number"], -7);
        assert_eq!(before["big"], u64::MAX);
        assert_eq!(before["flag"], true);
        assert_eq!(before["ratio"], 0.25);
        assert_eq!(before["odd"], "NaN");
        assert_eq!(before["debug"], "(\"x\", 1)");
        assert!(before.get("later").is_none());
        let after = &lines[1]["spans"][0];
        assert_eq!(after["later"], 5);
        assert_eq!(
            after["flag"], false,
            "a field recorded again shows its last value"
        );
        assert_eq!(lines[2]["spans"][0]["late"], "set");
    }
}
