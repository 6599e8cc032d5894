//! The HELP text of every metric family this service records itself, in one place (the
//! shared ones are described by `telemetry` and `server::ops_metrics`): a reader of a series in
//! Prometheus or Grafana learns what it counts without the code, and `promtool check metrics`
//! finds no family without it (tests/system/metrics_help.rs).

use metrics::{Unit, describe_counter, describe_gauge, describe_histogram};

/// Describes the families; called once as the server starts, before they are exported.
pub fn describe() {
    telemetry::metrics::handle();
    outbox::gauges::describe();
    describe_counter!(
        "relay_upstream_total",
        Unit::Count,
        "Point routes relayed to the point service, by route and outcome: answered (whatever \
         its status), unavailable (502: not reached) or timeout (504)."
    );
    describe_histogram!(
        "relay_upstream_duration_seconds",
        Unit::Seconds,
        "How long the point service took to answer a relayed route (to its answer's head), by route."
    );
    describe_counter!(
        "gift_card_credit_attempts_total",
        Unit::Count,
        "Tries to credit a redeemed gift-card code's points, by who tried (request, retry) and \
         outcome (credited, refused, failed, unconfigured)."
    );
    describe_gauge!(
        "gift_card_credits_pending",
        Unit::Count,
        "Redeemed gift-card codes whose points are not credited yet, database-wide."
    );
    describe_gauge!(
        "gift_card_credit_oldest_pending_seconds",
        Unit::Seconds,
        "How long the oldest redeemed gift-card code not credited yet has waited (0 when none), database-wide."
    );
}
