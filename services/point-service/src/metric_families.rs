//! The HELP text of every metric family this service records itself, in one place (the
//! shared ones are described by `telemetry` and `server::ops_metrics`): a reader of a series in
//! Prometheus or Grafana learns what it counts without the code, and `promtool check metrics`
//! finds no family without it (tests/system/metrics_help.rs).

use metrics::{Unit, describe_counter, describe_gauge, describe_histogram};

use crate::ledger;
use crate::payments::{client, sync, webhook};

/// Describes the families; called once as the server starts, before they are exported.
pub fn describe() {
    telemetry::metrics::handle();
    describe_counter!(
        ledger::LEDGER_ENTRIES,
        Unit::Count,
        "Points ledger entries appended, by kind (earn, spend, gift_sent, gift_received, \
         purchase, gift_card_credit, adjustment, expiry)."
    );
    describe_histogram!(
        crate::orders::batches::BATCH_SIZE,
        Unit::Count,
        "Batches of point orders paid with points written in one transaction, by their number \
         of orders (orders::batches)."
    );
    describe_gauge!(
        crate::orders::batches::QUEUED,
        Unit::Count,
        "Point orders paid with points waiting for a batch (orders::batches); one that grows \
         says the batches are slower than the orders."
    );
    describe_counter!(
        crate::back_office::GUARDRAIL_PASSED,
        Unit::Count,
        "Guardrails of the back office a super_admin went beyond, by guardrail (offer_points_per_sar: \
         an offer above the points per SAR an admin may give; expiry_shortened: an expiry window \
         where there was none, or a shorter one)."
    );
    outbox::gauges::describe();
    describe_counter!(
        webhook::EVENTS,
        Unit::Count,
        "Signed payment webhook events received, by the outcome applying them gave (captured, \
         declined, duplicate_event, unknown_order, unknown_type, ...)."
    );
    describe_counter!(
        webhook::signature::SIGNATURE_FAILURES,
        Unit::Count,
        "Payment webhook deliveries refused for their signature, by reason (missing, malformed, stale, mismatch)."
    );
    describe_counter!(
        webhook::UNAPPLIED_CAPTURES,
        Unit::Count,
        "Captures that took a client's money and could not be applied (no points given), by \
         reason; each waits for a refund in `point-service unapplied-captures`."
    );
    describe_counter!(
        client::REQUESTS,
        Unit::Count,
        "Calls to the payment service, by route and outcome (2xx, 4xx, 5xx, timeout, unreachable)."
    );
    describe_histogram!(
        client::DURATION,
        Unit::Seconds,
        "How long each call to the payment service took, by route."
    );
    describe_counter!(
        sync::APPLIED,
        Unit::Count,
        "Payments read back by the payment sync and applied, by the outcome the webhook's rules gave them."
    );
    describe_counter!(
        sync::ANOMALIES,
        Unit::Count,
        "Read-backs not applied because they contradict what was asked, by kind (other_payment, other_reference)."
    );
    describe_counter!(
        sync::LISTED,
        Unit::Count,
        "Orders the payment sync gave up on past its horizon and listed for a person (`point-service unsynced-orders`)."
    );
    describe_counter!(
        sync::ERRORS,
        Unit::Count,
        "Syncs of an order that failed on our side (the database, a bug); the order is tried again later."
    );
    describe_gauge!(
        "payment_captures_unapplied_open",
        Unit::Count,
        "Captures that took money without points and are not yet resolved (refunded), database-wide."
    );
    describe_gauge!(
        "payment_captures_unapplied_oldest_seconds",
        Unit::Seconds,
        "Age of the oldest unresolved capture that took money without points (0 when none), database-wide."
    );
    describe_gauge!(
        "payment_sync_orders_due",
        Unit::Count,
        "Open orders whose payments are due to be read back from the payment service, database-wide."
    );
    describe_gauge!(
        "payment_sync_oldest_due_seconds",
        Unit::Seconds,
        "How long the most overdue order due to be read back has waited past its due time (0 when none), database-wide."
    );
    describe_gauge!(
        "payment_sync_orders_listed",
        Unit::Count,
        "Orders listed for a person past the payment sync's horizon and not yet resolved, database-wide."
    );
    describe_gauge!(
        "payment_settlement_last_check_timestamp_seconds",
        Unit::Seconds,
        "When the most recent day a settlement check concluded was checked, as a Unix time (0 before the first)."
    );
    describe_gauge!(
        "payment_settlement_differences",
        Unit::Count,
        "Differences between the payment service's settlement and the ledger found for the most recent concluded day."
    );
    describe_gauge!(
        "payment_settlement_unreadable",
        Unit::Count,
        "Days of the last 30 whose settlement could not be read and that no check has concluded since."
    );
}
