-- More of the events other systems read (docs/decisions.md, "Events"), each written by a
-- trigger in the transaction of its change, as the ledger's are:
-- - `order.successful`, `order.payment_failed`: a point order made here (one with an order
--   number; the seed's legacy copies have none) reaching its outcome, for its payer;
-- - `capture.unapplied`: a capture that took money and credited nothing, listed for refund,
--   for the payer of the order it names (none when it names no order);
-- - `catalog.changed`: a back-office change of what the app sells (an offer, an occasion, the
--   expiry policy), from its audit row, about no client.
--
-- Order per client: the writers of these hold the client's account lock as the ledger's do
-- (the webhook and the payment sync lock the payer's and the recipient's accounts before
-- they touch the order), so a client's rows still take their ids in commit order.
-- The outbox's write made cheaper (it is in every point order's transaction, three rows an
-- order: docs/decisions.md, "Events", the cost):
-- - no unique index on `event_id`: a random UUID lands on a random page of a large index,
--   a read and a full-page write each; `gen_random_uuid()`'s 122 random bits need no check,
--   and nothing looks an event up by it;
-- - the publisher's queue by id only (the oldest unpublished row's `written_at` is the one
--   with the smallest id);
-- - the ledger's rows written by one statement-level trigger per statement (the batched
--   orders insert up to 64 orders' entries in one), not one trigger call per row.
ALTER TABLE event_outbox DROP CONSTRAINT event_outbox_event_id_key;
DROP INDEX event_outbox_unpublished;
CREATE INDEX event_outbox_unpublished ON event_outbox (id) WHERE published_at IS NULL;

DROP TRIGGER point_entries_event ON point_entries;
DROP FUNCTION point_entries_event();
-- As before: `points.expired` for an expiry, otherwise by the sign of the change; in the
-- entries' id order.
CREATE FUNCTION point_entries_events() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO event_outbox (type, client_id, data, occurred_at)
    SELECT CASE WHEN e.kind = 'expiry' THEN 'points.expired'
                WHEN e.points > 0 THEN 'points.credited'
                ELSE 'points.spent' END,
           e.client_id,
           jsonb_build_object(
               'entryId', e.id,
               'kind', e.kind,
               'points', trim_scale(e.points)::text,
               'orderId', e.order_correlation_id),
           e.created_at
    FROM added e
    ORDER BY e.id;
    RETURN NULL;
END;
$$;
CREATE TRIGGER point_entries_events
    AFTER INSERT ON point_entries
    REFERENCING NEW TABLE AS added
    FOR EACH STATEMENT EXECUTE FUNCTION point_entries_events();

ALTER TABLE event_outbox DROP CONSTRAINT event_outbox_type_check;
ALTER TABLE event_outbox ADD CONSTRAINT event_outbox_type_check CHECK (type IN (
    'points.credited', 'points.spent', 'points.expired', 'points.expiring',
    'order.successful', 'order.payment_failed', 'capture.unapplied', 'catalog.changed'));
-- An event about no client: a catalogue change, a capture that names no order.
ALTER TABLE event_outbox ALTER COLUMN client_id DROP NOT NULL;
ALTER TABLE event_outbox ADD CONSTRAINT event_outbox_client_named
    CHECK (client_id IS NOT NULL OR type IN ('capture.unapplied', 'catalog.changed'));

-- The order's outcome. Money and points as exact decimal text; the occasion by id only (a
-- custom occasion's text is the payer's own words). One definition for both triggers below.
CREATE FUNCTION point_order_outcome(o point_orders) RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
    SELECT jsonb_build_object(
        'orderId', o.correlation_id,
        'orderNo', o.order_no,
        'recipientId', o.recipient_id,
        'orderType', o.order_type,
        'paymentType', o.payment_type,
        'points', trim_scale(o.point_amount)::text,
        'pointsPrice', trim_scale(o.purchased_point_amount)::text,
        'moneyAmount', trim_scale(o.money_amount)::text,
        'occasionId', o.point_occasion_id)
$$;
-- A point order paid with points is written successful, a batch of them in one statement.
CREATE FUNCTION point_orders_outcomes_made() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO event_outbox (type, client_id, data, occurred_at)
    SELECT 'order.' || o.status, o.payer_id, point_order_outcome(o), o.updated_at
    FROM added o
    WHERE o.status IN ('successful', 'payment_failed') AND o.order_no IS NOT NULL
    ORDER BY o.order_no;
    RETURN NULL;
END;
$$;
CREATE TRIGGER point_orders_outcomes_made
    AFTER INSERT ON point_orders
    REFERENCING NEW TABLE AS added
    FOR EACH STATEMENT EXECUTE FUNCTION point_orders_outcomes_made();
-- A card order moves to successful or payment_failed from initial_order, one at a time.
CREATE FUNCTION point_orders_outcome_reached() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO event_outbox (type, client_id, data, occurred_at)
    VALUES ('order.' || NEW.status, NEW.payer_id, point_order_outcome(NEW), NEW.updated_at);
    RETURN NULL;
END;
$$;
CREATE TRIGGER point_orders_outcome_reached
    AFTER UPDATE OF status ON point_orders
    FOR EACH ROW
    WHEN (OLD.status IS DISTINCT FROM NEW.status
          AND NEW.status IN ('successful', 'payment_failed') AND NEW.order_no IS NOT NULL)
    EXECUTE FUNCTION point_orders_outcome_reached();

-- A capture listed for refund: the payment, its money (minor units as text, the currency as
-- the payment service named it), why it was not applied. Not the reference: the payment
-- service's text, which names the order when it is one (`orderId`).
CREATE FUNCTION unapplied_captures_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO event_outbox (type, client_id, data, occurred_at)
    VALUES (
        'capture.unapplied',
        (SELECT payer_id FROM point_orders WHERE correlation_id = NEW.correlation_id),
        jsonb_build_object(
            'paymentEventId', NEW.event_id,
            'paymentId', NEW.payment_id,
            'orderId', NEW.correlation_id,
            'amountMinor', NEW.amount_minor::text,
            'currency', NEW.currency,
            'reason', NEW.reason),
        NEW.recorded_at);
    RETURN NULL;
END;
$$;
CREATE TRIGGER unapplied_captures_event
    AFTER INSERT ON unapplied_captures
    FOR EACH ROW EXECUTE FUNCTION unapplied_captures_event();

-- A back-office change of what the app sells, from its audit row: the action, the record
-- (`offer:<id>`, `occasion:<id>`, `settings:expiry`) and the record after the change, as
-- the operator API answers it. Not who made it. Adjustments are the ledger's own events.
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
    WHEN (NEW.action IN ('offer.create', 'offer.update', 'offer.withdraw', 'occasion.create',
                         'occasion.update', 'occasion.withdraw', 'expiry_policy.replace'))
    EXECUTE FUNCTION back_office_catalog_event();
