-- Payment sync (docs/design.md, "Payment service"): two reads of one payment that disagree
-- decide nothing. A read of a payment in a final state (captured or declined) is kept while
-- its order is synced, so that a later pass that reads it otherwise is seen to disagree;
-- the first final reading stays (a gateway that flips keeps disagreeing with it).
CREATE TABLE payment_sync_readings (
    correlation_id UUID NOT NULL REFERENCES payment_syncs (correlation_id) ON DELETE CASCADE,
    payment_id     TEXT NOT NULL,
    status         TEXT NOT NULL CHECK (status IN ('captured', 'declined')),
    amount_minor   BIGINT NOT NULL,
    currency       TEXT NOT NULL,
    read_at        TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (correlation_id, payment_id)
);

-- Passes since the order's latest attempt whose reads disagreed: at
-- `payments::sync::DISAGREEMENTS_LISTED` the order is listed for a person with both readings.
ALTER TABLE payment_syncs
    ADD COLUMN disagreements INTEGER NOT NULL DEFAULT 0 CHECK (disagreements >= 0);

-- A schedule's generation is never handed out twice, even to a row made again after the
-- order's row was deleted (made final, then paid again): a sync still holding the old
-- generation must not finish, list or postpone the new schedule (payments::sync::queue).
CREATE SEQUENCE payment_sync_generations;
SELECT setval('payment_sync_generations', COALESCE((SELECT max(generation) FROM payment_syncs), 0) + 1);
ALTER TABLE payment_syncs ALTER COLUMN generation SET DEFAULT nextval('payment_sync_generations');

-- A pay call that never reached the payment service (no connection could be made) made no
-- payment: recorded as `unsent`, counted for nothing like a refusal, so its order is not
-- kept under sync waiting for a payment that cannot exist.
ALTER TABLE payment_attempts DROP CONSTRAINT payment_attempts_state_check;
ALTER TABLE payment_attempts ADD CONSTRAINT payment_attempts_state_check
    CHECK (state IN ('started', 'answered', 'refused', 'lost', 'unsent'));
