//! The process's Prometheus recorder. The `metrics` facade is global, so the recorder is
//! installed once per process and every app in it renders the same registry.

use std::sync::OnceLock;

use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};

/// Request latency buckets in seconds: fine below 10 ms where the hot paths live, up to
/// the longest wait a call may be given: just under the 25 s a stopping server still serves
/// a request (`server::run::SHUTDOWN_TIMEOUT`, which `server::Env::call_wait` holds every
/// configured wait below), so a relay at its pay wait (20 s by default) is its own bucket.
const LATENCY_BUCKETS: &[f64] = &[
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0,
    25.0,
];

static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();

/// The handle to render `/metrics`, installing the recorder on first use.
pub fn handle() -> &'static PrometheusHandle {
    HANDLE.get_or_init(|| {
        let builder = PrometheusBuilder::new();
        let builder = match builder
            .set_buckets_for_metric(Matcher::Suffix("_seconds".into()), LATENCY_BUCKETS)
        {
            Ok(b) => b,
            // Only an empty bucket list is refused, and ours is not empty.
            Err(_) => PrometheusBuilder::new(),
        };
        let recorder = builder.build_recorder();
        let handle = recorder.handle();
        if metrics::set_global_recorder(recorder).is_err() {
            tracing::warn!("a metrics recorder was already installed; /metrics may be empty");
        }
        describe();
        handle
    })
}

/// Every request, by method, route pattern and status (`http::observe`).
pub const HTTP_REQUESTS: &str = "http_requests_total";
/// How long each request took, by the same labels.
pub const HTTP_REQUEST_DURATION: &str = "http_request_duration_seconds";

/// The HELP text of the families this crate records (each crate describes its own): a reader
/// of a series in Prometheus or Grafana learns what it counts without the code, and
/// `promtool check metrics` finds no family without it (tests/system/metrics_help.rs).
fn describe() {
    metrics::describe_counter!(
        crate::closed_connections::CLOSED_CONNECTIONS,
        metrics::Unit::Count,
        "Outbound calls that met a connection closed by the other side before their answer, by callee \
         host and outcome (`resent`: a resendable call sent once more and answered; `failed`)."
    );
    metrics::describe_counter!(
        HTTP_REQUESTS,
        metrics::Unit::Count,
        "HTTP requests answered, by method, route pattern (`unmatched` for a path of no route) and status."
    );
    metrics::describe_histogram!(
        HTTP_REQUEST_DURATION,
        metrics::Unit::Seconds,
        "Time from a request's arrival to its answer's head, by method, route pattern and status."
    );
}

/// The Prometheus text for `/metrics`.
pub fn render() -> String {
    let handle = handle();
    handle.run_upkeep();
    handle.render()
}

/// Exports `name{label=value}` at 0 for each value before its first event. Prometheus sees a
/// counter's increase only between two samples, so a series that first appears at 1 shows no
/// increase: without this, the first unapplied capture after a start would never alert.
pub fn counters_at_zero(name: &'static str, label: &'static str, values: &[&'static str]) {
    handle();
    for value in values {
        metrics::counter!(name, label => *value).increment(0);
    }
}

/// A counter and a latency histogram of one label set.
pub type Series = (metrics::Counter, metrics::Histogram);

/// Handles of labelled series, kept per worker thread in a `thread_local!`: registering a
/// labelled metric hashes and compares its whole key in the recorder's shared registry, which
/// on every request, for the same few dozen series, was a visible part of a request's cost.
pub type SeriesCache<K> = std::cell::RefCell<std::collections::HashMap<K, Series>>;

/// Counts one more event of the series `key` and records its duration, registering the series
/// with `register` the first time this thread sees `key`.
pub fn count_and_time<K: std::hash::Hash + Eq>(
    cache: &'static std::thread::LocalKey<SeriesCache<K>>,
    key: K,
    register: impl FnOnce(&K) -> Series,
    seconds: f64,
) {
    cache.with(|cache| {
        let mut cache = cache.borrow_mut();
        let (count, latency) = cache.entry(key).or_insert_with_key(register);
        count.increment(1);
        latency.record(seconds);
    });
}
