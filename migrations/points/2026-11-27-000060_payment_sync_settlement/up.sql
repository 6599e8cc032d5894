-- Payment sync (docs/design.md, "Payment service"): the gateway is the source of truth, the
-- webhook only its fast path. An order whose latest pay attempt is older than
-- PAYMENT_SYNC_AFTER_SECONDS and that is still `initial_order` has its payments read back
-- from the payment service and applied as their webhooks would be. One row per order that
-- may still need it: written with each pay attempt (and at once for a signed event of an
-- unknown type), deleted when the order becomes final.
CREATE TABLE payment_syncs (
    correlation_id UUID PRIMARY KEY REFERENCES point_orders (correlation_id),
    -- The latest pay attempt's start (or the unknown event's arrival): the horizon counts
    -- from here.
    since          TIMESTAMPTZ NOT NULL DEFAULT now(),
    -- When the order is next read back. Taking it pushes this forward by a lease's length,
    -- so a worker that dies between reading and applying leaves it due again, not lost.
    due_at         TIMESTAMPTZ NOT NULL,
    -- Reads since the latest attempt; the backoff doubles with each.
    tries          INTEGER NOT NULL DEFAULT 0 CHECK (tries >= 0),
    -- Moved by every schedule (a pay attempt, an unknown event): a sync writes its outcome
    -- only while the generation it took is current, so a sync that read before a newer
    -- attempt cannot delete, list or postpone the newer attempt's schedule.
    generation     BIGINT NOT NULL DEFAULT 0,
    last_error     TEXT,
    -- Past the horizon with the order still open: listed for a person
    -- (`point-service unsynced-orders`), no longer read back.
    listed_at      TIMESTAMPTZ,
    resolved_at    TIMESTAMPTZ,
    resolution     TEXT,
    CHECK ((resolved_at IS NULL) = (resolution IS NULL)),
    CHECK (resolved_at IS NULL OR listed_at IS NOT NULL)
);
CREATE INDEX payment_syncs_due ON payment_syncs (due_at) WHERE listed_at IS NULL;
CREATE INDEX payment_syncs_listed ON payment_syncs (listed_at) WHERE listed_at IS NOT NULL AND resolved_at IS NULL;

-- A capture is checked against the attempts of every order: one naming a payment that
-- another order's pay call was answered with is not credited to the order it names.
CREATE INDEX payment_attempts_payment ON payment_attempts (payment_id) WHERE payment_id IS NOT NULL;

-- Orders open before this migration whose payments nobody will ever tell us about again:
-- synced from their latest attempt (PAYMENT_SYNC_AFTER_SECONDS' default, 120 s).
INSERT INTO payment_syncs (correlation_id, since, due_at)
SELECT a.correlation_id, max(a.started_at), max(a.started_at) + interval '120 seconds'
FROM payment_attempts a
JOIN point_orders o ON o.correlation_id = a.correlation_id AND o.status = 'initial_order'
GROUP BY a.correlation_id;

-- One worker across replicas for a job that must not run twice at once (the sync, whose
-- reads of the payment service are rate-bounded as a whole): the holder's lease.
CREATE TABLE worker_leases (
    name   TEXT PRIMARY KEY,
    holder TEXT NOT NULL,
    until  TIMESTAMPTZ NOT NULL
);

-- A signed event of a type the service does not know keeps its body for whoever reads it.
ALTER TABLE payment_events ADD COLUMN body TEXT;

-- `point-service reconcile --date D`: each run's outcome, which every replica exports as
-- metrics (a command-line run cannot be scraped) and the alerts watch.
CREATE TABLE settlement_checks (
    day         DATE PRIMARY KEY,
    checked_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    -- agrees: no difference; differs: `differences` lines were printed; unreadable: the
    -- settlement could not be read, nothing concluded.
    outcome     TEXT NOT NULL CHECK (outcome IN ('agrees', 'differs', 'unreadable')),
    differences INTEGER NOT NULL DEFAULT 0 CHECK (differences >= 0),
    CHECK ((outcome = 'differs') = (differences > 0))
);

-- A capture naming an order whose payment another order's pay call was answered with (a
-- gateway that mixed up the reference) is listed for refund, never credited to the order it
-- names (`other_order`).
ALTER TABLE unapplied_captures DROP CONSTRAINT unapplied_captures_reason_check;
ALTER TABLE unapplied_captures ADD CONSTRAINT unapplied_captures_reason_check CHECK (reason IN (
    'already_successful', 'payment_failed', 'not_payable', 'unknown_order',
    'amount_mismatch', 'currency_mismatch', 'unreadable', 'other_order'));
