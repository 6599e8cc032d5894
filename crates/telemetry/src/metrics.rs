//! The process's Prometheus recorder. The `metrics` facade is global, so the recorder is
//! installed once per process and every app in it renders the same registry.

use std::sync::OnceLock;

use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};

/// Request latency buckets in seconds: fine below 10 ms where the hot paths live, up to
/// the 20 s pay timeout.
const LATENCY_BUCKETS: &[f64] = &[
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0,
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
        handle
    })
}

/// The Prometheus text for `/metrics`.
pub fn render() -> String {
    let handle = handle();
    handle.run_upkeep();
    handle.render()
}
