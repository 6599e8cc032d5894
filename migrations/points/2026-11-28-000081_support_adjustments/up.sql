-- Support's adjustments (docs/decisions.md, "The loyalty back office"): a credit or a debit
-- an operator makes for a client through the back office, with a reason and a reference of
-- its own. Each is one `support_adjustment` entry, whose reference is `support:<reference>`
-- (UNIQUE, so the same reference can never move a balance twice), and one row here naming
-- who made it and why, both written in one transaction that holds the client's account.
ALTER TABLE point_entries DROP CONSTRAINT point_entries_kind_check;
ALTER TABLE point_entries ADD CONSTRAINT point_entries_kind_check CHECK (kind IN (
    'earn', 'spend', 'gift_sent', 'gift_received', 'purchase', 'gift_card_credit', 'adjustment',
    'expiry', 'support_adjustment'));

ALTER TABLE point_entries DROP CONSTRAINT point_entries_sign;
ALTER TABLE point_entries ADD CONSTRAINT point_entries_sign CHECK (CASE
    WHEN kind IN ('spend', 'gift_sent', 'expiry') THEN points < 0
    WHEN kind IN ('adjustment', 'support_adjustment') THEN points <> 0
    ELSE points > 0
END);

ALTER TABLE point_entries ADD CONSTRAINT point_entries_support_reference CHECK (
    kind <> 'support_adjustment'
    OR (reference IS NOT NULL AND reference LIKE 'support:%' AND order_correlation_id IS NULL));

CREATE TABLE support_adjustments (
    -- As the operator sent it; the entry's reference is `support:` followed by it.
    reference     TEXT PRIMARY KEY CHECK (reference <> '' AND length(reference) <= 200),
    client_id     BIGINT NOT NULL REFERENCES point_accounts (client_id),
    -- Signed: a credit is positive, a debit negative.
    points        NUMERIC NOT NULL CHECK (points <> 0),
    reason        TEXT NOT NULL CHECK (reason <> '' AND length(reason) <= 500),
    operator_id   TEXT NOT NULL CHECK (operator_id <> ''),
    operator_role TEXT NOT NULL CHECK (operator_role <> ''),
    -- The client's balance right after it.
    balance_after NUMERIC NOT NULL,
    created_at    TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX support_adjustments_client ON support_adjustments (client_id, created_at DESC);
