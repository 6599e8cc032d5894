-- The points events other systems read (docs/decisions.md, "Events"): one row per change of
-- a client's points, written by a trigger on the ledger in the transaction that appends the
-- entry, so that no entry commits without its event, no event exists for an entry that
-- rolled back, and no writer of the ledger (the order rules, the webhook, the expiry job,
-- the back office, the seed) can forget one. The publisher (`events::publisher`) sends the
-- rows in id order to NATS JetStream, with `event_id` as the message id, and marks them
-- published; housekeeping deletes published rows after their retention.
--
-- Order per client: every writer appends under the lock of the client's account
-- (`ledger::lock_accounts`), so a client's rows take their ids in commit order.
CREATE TABLE event_outbox (
    id           BIGSERIAL PRIMARY KEY,
    event_id     UUID NOT NULL UNIQUE DEFAULT gen_random_uuid(),
    type         TEXT NOT NULL CHECK (type IN ('points.credited', 'points.spent', 'points.expired', 'points.expiring')),
    client_id    BIGINT NOT NULL CHECK (client_id > 0),
    data         JSONB NOT NULL CHECK (jsonb_typeof(data) = 'object'),
    -- When the change happened (the entry's `created_at`; a seeded entry's is its own date).
    occurred_at  TIMESTAMPTZ NOT NULL,
    -- When the row was written: how long an event has waited (`events_outbox_oldest_seconds`).
    written_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    published_at TIMESTAMPTZ
);
-- The publisher's queue: the unpublished rows, oldest first.
CREATE INDEX event_outbox_unpublished ON event_outbox (id, written_at) WHERE published_at IS NULL;
-- Housekeeping's: published rows by age.
CREATE INDEX event_outbox_published ON event_outbox (published_at) WHERE published_at IS NOT NULL;

-- A ledger entry's event: `points.expired` for an expiry, otherwise by the sign of the change.
-- The points as exact decimal text without trailing zeros (`100`, `-50.25`). Not the entry's
-- reference: an operator's or a caller's free text (a support case, a gift code) has no place
-- in what partners read; the kind says where the change came from.
CREATE FUNCTION point_entries_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO event_outbox (type, client_id, data, occurred_at)
    VALUES (
        CASE WHEN NEW.kind = 'expiry' THEN 'points.expired'
             WHEN NEW.points > 0 THEN 'points.credited'
             ELSE 'points.spent' END,
        NEW.client_id,
        jsonb_build_object(
            'entryId', NEW.id,
            'kind', NEW.kind,
            'points', trim_scale(NEW.points)::text,
            'orderId', NEW.order_correlation_id),
        NEW.created_at);
    RETURN NULL;
END;
$$;
CREATE TRIGGER point_entries_event
    AFTER INSERT ON point_entries
    FOR EACH ROW EXECUTE FUNCTION point_entries_event();

-- "Points expiring soon" (`expiry::notices`, run by `expire-points`): one row per client,
-- expiry date and notice (7 and 1 days before, by default), written under the client's
-- account lock with the points that would expire; its key makes the notice once however often
-- the job runs, and the trigger below writes its event in the same transaction. Kept 400 days
-- (housekeeping), past any date a notice can be for.
CREATE TABLE expiry_notices (
    client_id   BIGINT NOT NULL CHECK (client_id > 0),
    expiry_date DATE NOT NULL,
    days_before INTEGER NOT NULL CHECK (days_before BETWEEN 0 AND 365),
    points      NUMERIC NOT NULL CHECK (points > 0),
    -- The client's newest ledger entry when the notice was written: where it stands among the
    -- client's other events for a consumer that orders them by entry.
    as_of_entry_id BIGINT NOT NULL CHECK (as_of_entry_id >= 0),
    created_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (client_id, expiry_date, days_before)
);
-- Housekeeping's.
CREATE INDEX expiry_notices_created ON expiry_notices (created_at);

CREATE FUNCTION expiry_notices_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO event_outbox (type, client_id, data, occurred_at)
    VALUES (
        'points.expiring',
        NEW.client_id,
        jsonb_build_object(
            'expiryDate', to_char(NEW.expiry_date, 'YYYY-MM-DD'),
            'daysBefore', NEW.days_before,
            'points', trim_scale(NEW.points)::text,
            'asOfEntryId', NEW.as_of_entry_id),
        NEW.created_at);
    RETURN NULL;
END;
$$;
CREATE TRIGGER expiry_notices_event
    AFTER INSERT ON expiry_notices
    FOR EACH ROW EXECUTE FUNCTION expiry_notices_event();
