-- Gift-card credits that are retried until they land, by whichever replica is free.
--
-- A pending redemption is either being credited (`lease_until` in the future: one request
-- or one replica's retry task holds it, and every other request for the code gets 409) or
-- waiting for its next try (`next_attempt_at`, pushed back after each failure). A holder
-- that dies mid-way leaves a lease that simply runs out; the next holder sends the same
-- reference (`gift-card:<id>`), which the point service applies once.
--
-- `attempts` counts the credit calls started; it also fences a holder whose lease ran out
-- (its release only applies while the count is still its own). `answered_at` is when the
-- one 200 for this redemption was given: a redemption the retry task credited has none
-- yet, and its owner's next request gets it.
ALTER TABLE gift_card_redemptions
    ADD COLUMN attempts        INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    ADD COLUMN lease_until     TIMESTAMPTZ,
    ADD COLUMN next_attempt_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    ADD COLUMN last_error      TEXT,
    ADD COLUMN answered_at     TIMESTAMPTZ;

-- Before this migration only the redeeming request could credit, and it answered 200 when
-- it did: those 200s were given.
UPDATE gift_card_redemptions SET answered_at = credited_at WHERE status = 'credited';

ALTER TABLE gift_card_redemptions
    ADD CONSTRAINT gift_card_redemptions_credited_at
        CHECK ((status = 'credited') = (credited_at IS NOT NULL)),
    ADD CONSTRAINT gift_card_redemptions_answered_once_credited
        CHECK (answered_at IS NULL OR status = 'credited');

-- The retry task's scan and the pending gauge read only the pending rows.
CREATE INDEX gift_card_redemptions_pending
    ON gift_card_redemptions (next_attempt_at) WHERE status = 'pending';
