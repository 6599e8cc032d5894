-- Idempotency-Key on point-order creation: the same caller and key within 24 hours gets
-- the first order back; the same key with another body is refused.
CREATE TABLE idempotency_keys (
    client_id      BIGINT NOT NULL,
    key            TEXT NOT NULL CHECK (length(key) BETWEEN 1 AND 255),
    request_hash   BYTEA NOT NULL,
    -- Deferred: the key is claimed first in the transaction that then writes its order.
    correlation_id UUID NOT NULL REFERENCES point_orders (correlation_id) DEFERRABLE INITIALLY DEFERRED,
    created_at     TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (client_id, key)
);
CREATE INDEX idempotency_keys_age ON idempotency_keys (created_at);

-- Every payment webhook event, once (events are idempotent by id), with what was done.
CREATE TABLE payment_events (
    id          TEXT PRIMARY KEY,
    type        TEXT NOT NULL,
    reference   TEXT NOT NULL,
    payment_id  TEXT,
    amount_minor BIGINT,
    currency    TEXT,
    outcome     TEXT NOT NULL,
    received_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX payment_events_reference ON payment_events (reference);

-- Credits made through /internal/v1/credits, by reference, with the answer first given.
CREATE TABLE internal_credits (
    reference     TEXT PRIMARY KEY,
    client_id     BIGINT NOT NULL REFERENCES point_accounts (client_id),
    points        NUMERIC NOT NULL CHECK (points > 0),
    reason        TEXT NOT NULL,
    balance_after NUMERIC NOT NULL,
    created_at    TIMESTAMPTZ NOT NULL DEFAULT now()
);
