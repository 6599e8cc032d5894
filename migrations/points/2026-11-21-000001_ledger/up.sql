-- The points ledger: an account per client and append-only entries. A balance is the sum
-- of the account's entries; `point_accounts.balance` caches that sum and is only ever
-- changed in the transaction that appends the entries (a spend locks the account row
-- with SELECT ... FOR UPDATE first, so concurrent spends cannot overdraw it).

CREATE TABLE point_settings (
    singleton       BOOLEAN PRIMARY KEY DEFAULT true CHECK (singleton),
    expiry          TEXT NOT NULL CHECK (expiry IN ('never', 'inactivity')),
    inactivity_days INTEGER CHECK (inactivity_days >= 0),
    updated_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
    CHECK (expiry = 'never' OR inactivity_days IS NOT NULL)
);

CREATE TABLE point_accounts (
    client_id  BIGINT PRIMARY KEY CHECK (client_id > 0),
    balance    NUMERIC NOT NULL DEFAULT 0,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
);

CREATE TABLE point_entries (
    id                   BIGSERIAL PRIMARY KEY,
    client_id            BIGINT NOT NULL REFERENCES point_accounts (client_id),
    kind                 TEXT NOT NULL CHECK (kind IN (
        'earn', 'spend', 'gift_sent', 'gift_received', 'purchase', 'gift_card_credit', 'adjustment')),
    -- The signed change to the balance.
    points               NUMERIC NOT NULL,
    order_correlation_id UUID,
    -- Makes a credit idempotent: the same reference is never applied twice.
    reference            TEXT UNIQUE,
    created_at           TIMESTAMPTZ NOT NULL DEFAULT now(),
    CONSTRAINT point_entries_sign CHECK (CASE
        WHEN kind IN ('spend', 'gift_sent') THEN points < 0
        WHEN kind = 'adjustment' THEN points <> 0
        ELSE points > 0
    END)
);
-- History, newest first.
CREATE INDEX point_entries_history ON point_entries (client_id, created_at DESC, id DESC);
-- The newest counted earn row decides the expiry date.
CREATE INDEX point_entries_newest_earn ON point_entries (client_id, created_at DESC) WHERE kind = 'earn';
CREATE INDEX point_entries_order ON point_entries (order_correlation_id) WHERE order_correlation_id IS NOT NULL;

CREATE FUNCTION point_entries_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'point_entries is append-only: % refused', TG_OP USING ERRCODE = 'restrict_violation';
END;
$$;
CREATE TRIGGER point_entries_append_only
    BEFORE UPDATE OR DELETE ON point_entries
    FOR EACH ROW EXECUTE FUNCTION point_entries_append_only();
