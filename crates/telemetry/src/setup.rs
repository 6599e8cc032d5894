//! Installs the global subscriber and tracer provider.

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing::{Metadata, Subscriber};
use tracing_subscriber::filter::{FilterExt, FilterFn, LevelFilter, filter_fn};
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

use crate::http::{REQUEST_SPAN, REQUEST_SPAN_TARGET};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    /// One JSON object per line, with the fields of every enclosing span (request id,
    /// trace id, route) so each line stands on its own in a log store.
    Json,
    /// One human-readable line per event, for a terminal.
    Pretty,
}

#[derive(Debug, Clone)]
pub struct TelemetryConfig {
    pub service_name: &'static str,
    pub log_format: LogFormat,
    /// An `EnvFilter` directive such as `info` or `point_service=debug,info`.
    pub log_filter: String,
    /// `OTEL_EXPORTER_OTLP_ENDPOINT`: the collector's base URL; traces go to `/v1/traces`.
    pub otlp_endpoint: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum TelemetryError {
    #[error("RUST_LOG is not a valid filter: {0}")]
    Filter(String),
    #[error("cannot build the OTLP exporter for {endpoint}: {reason}")]
    Exporter { endpoint: String, reason: String },
}

/// Keeps the tracer provider alive; [`TelemetryGuard::shutdown`] flushes spans not yet
/// exported (call it after the server has stopped).
pub struct TelemetryGuard {
    provider: SdkTracerProvider,
}

impl TelemetryGuard {
    pub fn shutdown(self) {
        if let Err(e) = self.provider.shutdown() {
            eprintln!("telemetry: flushing traces failed: {e}");
        }
    }
}

/// The log layer's span filter. A log line lists the fields of its request's root span
/// (request id, route, trace id) and no other span's: the log layer formats the fields of
/// every span it sees when the span starts and again on each record, which for the SQL,
/// client and relay spans of a request cost more than the request's own work, for lines that
/// rarely get written. By name and target: reqwest-tracing names its client spans
/// `HTTP request` too (and their fields hold the URL called, query and all).
pub(crate) fn request_spans_only() -> FilterFn<impl Fn(&Metadata<'_>) -> bool> {
    filter_fn(|meta| {
        meta.is_event() || (meta.name() == REQUEST_SPAN && meta.target() == REQUEST_SPAN_TARGET)
    })
}

/// The JSON log layer, writing to `writer`: one object per line, the event's fields flat,
/// then its request's fields as the `spans` list (`crate::request_fields`).
pub(crate) fn json_lines<S, W>(writer: W) -> impl Layer<S>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    W: for<'w> MakeWriter<'w> + Send + Sync + 'static,
{
    let format = tracing_subscriber::fmt::format()
        .json()
        .with_current_span(false)
        .with_span_list(true)
        .flatten_event(true);
    tracing_subscriber::fmt::layer()
        .fmt_fields(crate::log_fields::JsonSpanFields)
        .event_format(crate::request_fields::WithRequest(format))
        .with_writer(writer)
}

/// The log layer of `format`, writing to standard output.
fn log_lines<S>(format: LogFormat) -> Box<dyn Layer<S> + Send + Sync>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    match format {
        LogFormat::Json => json_lines(std::io::stdout).boxed(),
        LogFormat::Pretty => {
            use std::io::IsTerminal;
            // Colours only on a terminal: `make run` pipes the logs through a prefixer.
            let ansi = std::io::stdout().is_terminal();
            tracing_subscriber::fmt::layer().with_ansi(ansi).boxed()
        }
    }
}

/// Installs logging and tracing for the process. OpenTelemetry spans are built only when
/// they are exported; without an endpoint the trace context still flows from service to
/// service and its trace id appears in the logs (`trace_context`). Calling it a second time (tests
/// starting several apps) leaves the first setup in place.
pub fn init(config: &TelemetryConfig) -> Result<TelemetryGuard, TelemetryError> {
    let filter = EnvFilter::try_new(&config.log_filter)
        .map_err(|e| TelemetryError::Filter(e.to_string()))?;
    opentelemetry::global::set_text_map_propagator(TraceContextPropagator::new());

    let resource = Resource::builder()
        .with_service_name(config.service_name)
        .build();
    let mut provider = SdkTracerProvider::builder().with_resource(resource);
    let exporting = config.otlp_endpoint.is_some();
    if let Some(endpoint) = &config.otlp_endpoint {
        use opentelemetry_otlp::{WithExportConfig, WithHttpConfig};
        let traces_url = format!("{}/v1/traces", endpoint.trim_end_matches('/'));
        let exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_endpoint(traces_url)
            .with_headers(Default::default())
            .build()
            .map_err(|e| TelemetryError::Exporter {
                endpoint: endpoint.clone(),
                reason: e.to_string(),
            })?;
        provider = provider.with_batch_exporter(exporter);
    }
    let provider = provider.build();
    // Spans reach OpenTelemetry only when they are exported, and then at INFO whatever
    // RUST_LOG says, so that a quieter log level cannot cut the trace between services.
    // Without an exporter the trace context flows without them (`trace_context`).
    let otel = exporting.then(|| {
        let tracer = provider.tracer(config.service_name);
        opentelemetry::global::set_tracer_provider(provider.clone());
        tracing_opentelemetry::layer()
            .with_tracer(tracer)
            .with_filter(LevelFilter::INFO)
    });
    let installed = match otel {
        // Two layers that want different spans: the log layer's filter is its own, and the
        // registry keeps every span the exporter wants.
        Some(otel) => tracing_subscriber::registry()
            .with(otel)
            .with(log_lines(config.log_format).with_filter(filter.and(request_spans_only())))
            .try_init(),
        // The log layer alone: its filters are the whole subscriber's, so a span no line
        // lists (the relay's, a client call's) is never built, and every call site's
        // interest is settled once (with the max level, which the `log` crate's records
        // follow, RUST_LOG's). As the layer's own filter beside an empty exporter slot,
        // those spans were still made and dropped in the registry on every request (the
        // relay's profile: sharded-slab get and clear under its client span), and the max
        // level hint was TRACE.
        None => tracing_subscriber::registry()
            .with(filter)
            .with(request_spans_only())
            .with(log_lines(config.log_format))
            .try_init(),
    };
    match installed {
        Ok(()) => {
            crate::trace_context::set_exporting(exporting);
            crate::request_fields::set_used(!exporting && config.log_format == LogFormat::Json);
        }
        Err(_) => tracing::debug!("telemetry was already set up in this process"),
    }
    Ok(TelemetryGuard { provider })
}
