//! What `point-service housekeeping` deletes, and after how long: the one place the points
//! database's retention is written. A row is kept twice as long as the window any rule reads
//! it in (docs/decisions.md, "Housekeeping"), or, for an expiring-soon notice, past any date it
//! can be for.
//!
//! Never deleted: the ledger (`point_entries`, append-only), `point_accounts`,
//! `point_orders`, `payment_events`, `payment_attempts`, `unapplied_captures`,
//! `internal_credits`, `payment_syncs` (deleted by the sync itself once an order is final),
//! `settlement_checks`: money and points records; nor an event not yet published.

use std::time::Duration;

use housekeeping::Rule;

pub const RULES: &[Rule] = &[
    // Idempotency-Key: the same caller and key within 24 hours gets the first order back
    // (docs/decisions.md, "point-service"; `orders::IDEMPOTENCY_WINDOW`).
    Rule {
        table: "idempotency_keys",
        age: "created_at",
        keep: Duration::from_secs(2 * 24 * 3600),
    },
    // Events once published (`events`): a consumer that fell behind replays from the stream,
    // which keeps them longer; the outbox keeps a week of them to republish a range by hand
    // (docs/runbook.md). Unpublished rows have no `published_at` and are never deleted.
    Rule {
        table: "event_outbox",
        age: "published_at",
        keep: Duration::from_secs(7 * 24 * 3600),
    },
    // A notice's row keeps it from being sent twice for its date (`expiry::notices`): kept
    // past any date it can be for (a notice is at most 365 days before its date).
    Rule {
        table: "expiry_notices",
        age: "created_at",
        keep: Duration::from_secs(400 * 24 * 3600),
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_outlives_its_window_twice() {
        let window = crate::orders::IDEMPOTENCY_WINDOW
            .to_std()
            .unwrap_or_default();
        assert!(RULES[0].keep >= 2 * window);
    }
}
