-- The catalog's events other systems read (docs/decisions.md, "Events"), written by triggers
-- in the transaction of the change itself, as the points database's are (the same table):
-- - `giftcode.redeemed`: a gift code's redemption credited, for the client who redeemed it;
-- - `catalog.changed`: a back-office replacement of the earn-rate table, about no client.
-- The order service's publisher (`outbox::publisher`, lease `event-publisher` in
-- `worker_leases` below) sends them to the same JetStream stream as the point service's.
CREATE TABLE event_outbox (
    id           BIGSERIAL PRIMARY KEY,
    -- Random (no index: nothing looks an event up by it, and 122 random bits need no check).
    event_id     UUID NOT NULL DEFAULT gen_random_uuid(),
    type         TEXT NOT NULL CHECK (type IN ('giftcode.redeemed', 'catalog.changed')),
    -- Null on an event about no client.
    client_id    BIGINT CHECK (client_id > 0),
    data         JSONB NOT NULL CHECK (jsonb_typeof(data) = 'object'),
    occurred_at  TIMESTAMPTZ NOT NULL,
    written_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    published_at TIMESTAMPTZ,
    CONSTRAINT event_outbox_client_named CHECK (client_id IS NOT NULL OR type = 'catalog.changed')
);
CREATE INDEX event_outbox_unpublished ON event_outbox (id) WHERE published_at IS NULL;
CREATE INDEX event_outbox_published ON event_outbox (published_at) WHERE published_at IS NOT NULL;

-- One worker across replicas for a job that must not run twice at once (the publisher).
CREATE TABLE worker_leases (
    name   TEXT PRIMARY KEY,
    holder TEXT NOT NULL,
    until  TIMESTAMPTZ NOT NULL
);

-- A redemption credited: the code (redeemed once, ever, so worth nothing now), its batch,
-- the points and where they were credited (`point_service`, `legacy`; null on a redemption
-- from before targets were stored).
--
-- Order per client: nothing else serialises two redemptions of one client, so the trigger
-- takes the client's lock (class 0x67630003, beside the gift-card tries' 0x67630001/2)
-- before its row takes an id; held to commit, it makes the client's ids follow commit order.
-- The update is its transaction's last statement, so the lock waits on nothing.
CREATE FUNCTION gift_card_redemptions_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(x'67630003'::int, hashtext(NEW.client_id::text));
    INSERT INTO event_outbox (type, client_id, data, occurred_at)
    VALUES (
        'giftcode.redeemed',
        NEW.client_id,
        jsonb_build_object(
            'redemptionId', NEW.id,
            'code', NEW.code,
            'batchId', (SELECT batch_id FROM gift_card_codes WHERE code = NEW.code),
            'points', trim_scale(NEW.points)::text,
            'creditedTo', NEW.credit_target),
        NEW.credited_at);
    RETURN NULL;
END;
$$;
CREATE TRIGGER gift_card_redemptions_event
    AFTER UPDATE OF status ON gift_card_redemptions
    FOR EACH ROW
    WHEN (OLD.status = 'pending' AND NEW.status = 'credited')
    EXECUTE FUNCTION gift_card_redemptions_event();

-- The earn-rate table replaced, from its audit row: the action, the record (`earn-rates`)
-- and the table after the change, as the operator API answers it. Not who made it.
CREATE FUNCTION back_office_catalog_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO event_outbox (type, client_id, data, occurred_at)
    VALUES (
        'catalog.changed',
        NULL,
        jsonb_build_object(
            'auditId', NEW.id,
            'action', NEW.action,
            'record', NEW.subject,
            'after', NEW.after),
        NEW.created_at);
    RETURN NULL;
END;
$$;
CREATE TRIGGER back_office_catalog_event
    AFTER INSERT ON back_office_audit
    FOR EACH ROW
    WHEN (NEW.action = 'earn-rates.replace')
    EXECUTE FUNCTION back_office_catalog_event();
