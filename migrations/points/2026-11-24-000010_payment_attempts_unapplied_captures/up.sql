-- Payment attempts: each pay/card and pay/session call of an order, recorded before the
-- payment service is asked (state `started`) and then with its answer. The webhook decides
-- a decline by them: a decline of an attempt older than a newer one that still counts
-- leaves the order open (the client is still paying), and a decline that arrives while an
-- attempt's answer is not yet recorded is answered 503 so that the sender retries it.
CREATE TABLE payment_attempts (
    id             BIGSERIAL PRIMARY KEY,
    correlation_id UUID NOT NULL REFERENCES point_orders (correlation_id),
    kind           TEXT NOT NULL CHECK (kind IN ('card', 'session')),
    -- started: asked, no answer recorded yet; answered: the payment service gave a payment
    -- (or session) id; refused: it answered 4xx, no payment was made; lost: no usable
    -- answer (timeout, transport failure, 5xx, no id), so a payment may exist unseen.
    state          TEXT NOT NULL CHECK (state IN ('started', 'answered', 'refused', 'lost')),
    payment_id     TEXT CHECK ((state = 'answered') = (payment_id IS NOT NULL)),
    started_at     TIMESTAMPTZ NOT NULL DEFAULT now(),
    answered_at    TIMESTAMPTZ,
    CHECK ((state = 'started') = (answered_at IS NULL))
);
CREATE INDEX payment_attempts_order ON payment_attempts (correlation_id, id);

-- Captures that took the client's money but were not applied (order already successful or
-- failed, unknown order, another amount or currency): the list whoever refunds works from.
-- One row per payment: the same payment captured under another event id is no second charge.
CREATE TABLE unapplied_captures (
    event_id       TEXT PRIMARY KEY REFERENCES payment_events (id),
    reference      TEXT NOT NULL,
    -- Null when the reference names no order.
    correlation_id UUID REFERENCES point_orders (correlation_id),
    payment_id     TEXT,
    amount_minor   BIGINT,
    currency       TEXT,
    reason         TEXT NOT NULL CHECK (reason IN (
        'already_successful', 'payment_failed', 'not_payable', 'unknown_order',
        -- unreadable: a signed event whose body could not be read and that may be a capture.
        'amount_mismatch', 'currency_mismatch', 'unreadable')),
    recorded_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
    -- Set by `point-service unapplied-captures --resolve <event id> --note <text>`.
    resolved_at    TIMESTAMPTZ,
    resolution     TEXT,
    CHECK ((resolved_at IS NULL) = (resolution IS NULL))
);
CREATE UNIQUE INDEX unapplied_captures_payment ON unapplied_captures (payment_id) WHERE payment_id IS NOT NULL;
CREATE INDEX unapplied_captures_open ON unapplied_captures (recorded_at) WHERE resolved_at IS NULL;

-- A payment captured again is found by its payment id alone, whatever reference it names.
CREATE INDEX payment_events_payment ON payment_events (payment_id) WHERE payment_id IS NOT NULL;

-- Captures the earlier code recorded but did not apply, listed now so that none is lost. A
-- capture of the very payment that made its order successful (the same payment under
-- another event id) took no money twice and is left out.
INSERT INTO unapplied_captures (event_id, reference, correlation_id, payment_id, amount_minor, currency, reason, recorded_at)
SELECT DISTINCT ON (COALESCE(e.payment_id, e.id))
       e.id, e.reference, o.correlation_id, e.payment_id, e.amount_minor, e.currency,
       CASE
           WHEN o.correlation_id IS NULL THEN 'unknown_order'
           WHEN e.outcome = 'amount_mismatch' THEN 'amount_mismatch'
           WHEN o.status = 'successful' THEN 'already_successful'
           WHEN o.status = 'payment_failed' THEN 'payment_failed'
           ELSE 'not_payable'
       END,
       e.received_at
FROM payment_events e
LEFT JOIN point_orders o ON o.correlation_id::text = e.reference
WHERE e.type = 'payment_captured'
  AND e.outcome IN ('duplicate_capture', 'amount_mismatch', 'not_pending', 'unknown_order')
  AND NOT EXISTS (
      SELECT 1 FROM payment_events c
      WHERE c.type = 'payment_captured' AND c.outcome = 'captured' AND c.payment_id = e.payment_id)
ORDER BY COALESCE(e.payment_id, e.id), e.received_at;
