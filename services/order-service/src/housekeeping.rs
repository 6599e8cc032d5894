//! What `order-service housekeeping` deletes from the catalog database, and after how long:
//! the one place its retention is written. The order service owns the rows it deletes (it
//! writes them); a row is kept twice as long as the window its rule reads it in
//! (docs/decisions.md, "Housekeeping").
//!
//! Never deleted: `gift_card_redemptions` (gift-card credits: points), `gift_card_codes`,
//! `operator_audit` (the operators' audit trail), the catalog itself.

use std::time::Duration;

use housekeeping::Rule;

pub const RULES: &[Rule] = &[
    // Wrong gift-card codes: the limits count the last hour (`gift_cards::tries`,
    // GIFT_CODE_TRIES_PER_CLIENT_PER_HOUR, GIFT_CODE_TRIES_PER_IP_PER_HOUR).
    Rule {
        table: "gift_card_tries",
        age: "created_at",
        keep: Duration::from_secs(2 * 3600),
    },
    // Published events: JetStream holds them for the consumers; the outbox keeps a week of
    // them to republish a range by hand (docs/runbook.md). Unpublished rows have no
    // `published_at` and are never deleted.
    Rule {
        table: "event_outbox",
        age: "published_at",
        keep: Duration::from_secs(7 * 24 * 3600),
    },
];
