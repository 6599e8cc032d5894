//! What every JSON log line written while serving a request says about the request (method,
//! route, path, request id, trace id, the caller's request id), kept aside by the request
//! middleware ([`crate::http::observe`]) and written out only when a line is.
//!
//! Why not a tracing span, as when spans are exported or logs are for a terminal: the JSON
//! log layer writes a span's fields out as text when the span is made, and the registry,
//! the filter and the layer each do work when it is entered, left and closed, on every
//! request, though most requests write no line. On `/healthz` that was about 7 % of the
//! request's CPU time, most of what the shared request path cost above a bare handler. Here
//! a request costs one small allocation and a thread-local set around each poll, and the
//! fields become text only in a line that is written. The line is the same: a `spans` list
//! with one object, the fields in the span's order and then its `name`, as tracing-subscriber's
//! JSON format lists a span.

use std::cell::Cell;
use std::fmt;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};

use opentelemetry::trace::TraceId;
use tracing::{Event, Subscriber};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;

use crate::http::REQUEST_SPAN;
use crate::log_fields::push_string;

/// Whether requests keep their fields here rather than in a span: set by [`crate::init`]
/// when logs are JSON and no span is exported (the production settings).
static IN_LOG_LINES: AtomicBool = AtomicBool::new(false);

pub(crate) fn set_used(used: bool) {
    IN_LOG_LINES.store(used, Ordering::Relaxed);
}

pub(crate) fn used() -> bool {
    IN_LOG_LINES.load(Ordering::Relaxed)
}

/// A request's fields, in the order a line lists them.
pub(crate) struct RequestFields {
    pub method: &'static str,
    /// The route pattern (`/api/v2/client/point-offers/{id}`), or `default` when none matched.
    pub route: Option<String>,
    /// The path, never the query: it carries phone numbers and login codes.
    pub target: String,
    pub request_id: uuid::Uuid,
    pub trace_id: TraceId,
    pub caller_request_id: Option<String>,
}

thread_local! {
    /// The fields of the request being polled on this thread, if any. A `Cell`, whose
    /// `replace` and `set` cannot fail as a `RefCell`'s borrow can.
    static CURRENT: Cell<Option<Rc<RequestFields>>> = const { Cell::new(None) };
}

/// While alive, `fields` are the current request's on this thread (as an entered span is);
/// dropping it puts back what was current before.
pub(crate) struct Entered {
    previous: Option<Rc<RequestFields>>,
}

pub(crate) fn enter(fields: &Rc<RequestFields>) -> Entered {
    // `try_with`: a thread's locals may already be gone while it ends (then nothing is
    // current, and nothing is put back).
    let previous = CURRENT
        .try_with(|current| current.replace(Some(Rc::clone(fields))))
        .ok()
        .flatten();
    Entered { previous }
}

impl Drop for Entered {
    fn drop(&mut self) {
        let previous = self.previous.take();
        let _ = CURRENT.try_with(|current| current.set(previous));
    }
}

/// The current request's fields on this thread, if any.
fn current() -> Option<Rc<RequestFields>> {
    CURRENT
        .try_with(|current| {
            let fields = current.take();
            current.set(fields.clone());
            fields
        })
        .ok()
        .flatten()
}

impl RequestFields {
    /// The span object of a JSON line: `{"http.method":…,…,"name":"HTTP request"}`.
    fn write_json(&self, text: &mut String) {
        let mut uuid = uuid::Uuid::encode_buffer();
        text.push_str("{\"http.method\":");
        push_string(text, self.method);
        text.push_str(",\"http.route\":");
        push_string(text, self.route.as_deref().unwrap_or("default"));
        text.push_str(",\"http.target\":");
        push_string(text, &self.target);
        text.push_str(",\"request_id\":");
        push_string(text, self.request_id.hyphenated().encode_lower(&mut uuid));
        if self.trace_id != TraceId::INVALID {
            text.push_str(",\"trace_id\":");
            push_string(text, &self.trace_id.to_string());
        }
        if let Some(caller) = &self.caller_request_id {
            text.push_str(",\"caller_request_id\":");
            push_string(text, caller);
        }
        text.push_str(",\"name\":");
        push_string(text, REQUEST_SPAN);
        text.push('}');
    }
}

/// The JSON event format `E`, with the current request's fields as the line's `spans` list.
pub(crate) struct WithRequest<E>(pub E);

impl<S, N, E> FormatEvent<S, N> for WithRequest<E>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'w> FormatFields<'w> + 'static,
    E: FormatEvent<S, N>,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let Some(fields) = current() else {
            return self.0.format_event(ctx, writer, event);
        };
        let mut line = String::with_capacity(512);
        self.0.format_event(ctx, Writer::new(&mut line), event)?;
        // The inner format ends its object with "}\n"; its spans list would be the last key,
        // and it has none: the log layer sees no span but the request's own
        // (`setup::init`'s filter), which is not made while fields are kept here.
        let Some(object) = line.strip_suffix("}\n") else {
            return writer.write_str(&line);
        };
        let mut spans = String::with_capacity(256);
        spans.push_str(",\"spans\":[");
        fields.write_json(&mut spans);
        spans.push_str("]}\n");
        writer.write_str(object)?;
        writer.write_str(&spans)
    }
}

#[cfg(test)]
mod tests {
    use std::rc::Rc;

    use opentelemetry::trace::TraceId;
    use tracing_subscriber::Layer as _;
    use tracing_subscriber::layer::SubscriberExt;

    use super::{RequestFields, enter};

    /// The lines the production JSON layer writes while `f` runs.
    fn lines(f: impl FnOnce()) -> Vec<serde_json::Value> {
        raw_lines(f)
            .iter()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect()
    }

    /// The same, as written.
    fn raw_lines(f: impl FnOnce()) -> Vec<String> {
        let sink = crate::test_sink::Sink::default();
        let layer =
            crate::setup::json_lines(sink.clone()).with_filter(crate::setup::request_spans_only());
        let subscriber = tracing_subscriber::registry().with(layer);
        tracing::subscriber::with_default(subscriber, f);
        sink.lines()
    }

    fn fields(target: &str, caller: Option<&str>) -> Rc<RequestFields> {
        Rc::new(RequestFields {
            method: "GET",
            route: Some("/api/v2/client/point-offers/{id}".to_owned()),
            target: target.to_owned(),
            request_id: uuid::Uuid::from_u128(0x0123_4567_89ab_cdef_0123_4567_89ab_cdef),
            trace_id: TraceId::from_hex("4bf92f3577b34da6a3ce929d0e0e4736").unwrap(),
            caller_request_id: caller.map(str::to_owned),
        })
    }

    #[test]
    fn a_line_inside_a_request_lists_its_fields_as_the_request_span_and_none_outside() {
        let first = fields("/api/v2/client/point-offers/\"x\"\n\\", Some("relay-1"));
        let second = fields("/second", None);
        let lines = lines(|| {
            tracing::info!("outside");
            let entered = enter(&first);
            tracing::warn!(amount = 5, "inside");
            {
                let _nested = enter(&second);
                tracing::info!("nested");
            }
            tracing::info!("back");
            drop(entered);
            tracing::info!("after");
        });
        assert_eq!(lines.len(), 5, "{lines:?}");
        assert!(lines[0].get("spans").is_none(), "{}", lines[0]);
        assert!(lines[4].get("spans").is_none(), "{}", lines[4]);

        let inside = &lines[1];
        assert_eq!(inside["message"], "inside");
        assert_eq!(inside["amount"], 5);
        assert_eq!(inside["level"], "WARN");
        let span = inside["spans"][0].as_object().unwrap();
        let keys: Vec<&str> = span.keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "http.method",
                "http.route",
                "http.target",
                "request_id",
                "trace_id",
                "caller_request_id",
                "name"
            ]
        );
        assert_eq!(span["http.method"], "GET");
        assert_eq!(span["http.route"], "/api/v2/client/point-offers/{id}");
        assert_eq!(span["http.target"], "/api/v2/client/point-offers/\"x\"\n\\");
        assert_eq!(span["request_id"], "01234567-89ab-cdef-0123-456789abcdef");
        assert_eq!(span["trace_id"], "4bf92f3577b34da6a3ce929d0e0e4736");
        assert_eq!(span["caller_request_id"], "relay-1");
        assert_eq!(span["name"], "HTTP request");
        assert_eq!(inside["spans"].as_array().unwrap().len(), 1);

        assert_eq!(lines[2]["spans"][0]["http.target"], "/second");
        assert!(lines[2]["spans"][0].get("caller_request_id").is_none());
        assert_eq!(
            lines[3]["spans"][0]["http.target"],
            lines[1]["spans"][0]["http.target"]
        );
    }

    /// Another library's span of the same name (reqwest-tracing's client spans are also
    /// `HTTP request`, with the URL called in their fields) is not the request's: a line
    /// inside one lists the request's fields once, and nothing of the client span.
    #[test]
    fn a_client_span_of_the_same_name_adds_nothing_to_a_line() {
        let request = fields("/api/v1/auth/send-otp", None);
        let lines = raw_lines(|| {
            let _entered = enter(&request);
            let client = tracing::info_span!(
                target: "reqwest_tracing::reqwest_otel_span_builder",
                "HTTP request",
                url.full = "https://sms.example/send?key=secret"
            );
            client.in_scope(|| tracing::info!("calling"));
        });
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert_eq!(lines[0].matches("\"spans\"").count(), 1, "{}", lines[0]);
        assert!(!lines[0].contains("secret"), "{}", lines[0]);
        let line: serde_json::Value = serde_json::from_str(&lines[0]).unwrap();
        assert_eq!(line["spans"][0]["http.target"], "/api/v1/auth/send-otp");
    }
}
