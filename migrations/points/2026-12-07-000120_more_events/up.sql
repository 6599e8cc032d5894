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
ALTER TABLE event_outbox DROP CONSTRAINT event_outbox_type_check;
ALTER TABLE event_outbox ADD CONSTRAINT event_outbox_type_check CHECK (type IN (
    'points.credited', 'points.spent', 'points.expired', 'points.expiring',
    'order.successful', 'order.payment_failed', 'capture.unapplied', 'catalog.changed'));
-- An event about no client: a catalogue change, a capture that names no order.
ALTER TABLE event_outbox ALTER COLUMN client_id DROP NOT NULL;
ALTER TABLE event_outbox ADD CONSTRAINT event_outbox_client_named
    CHECK (client_id IS NOT NULL OR type IN ('capture.unapplied', 'catalog.changed'));

-- The order's outcome. Money and points as exact decimal text; the occasion by id only (a
-- custom occasion's text is the payer's own words).
CREATE FUNCTION point_orders_outcome_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO event_outbox (type, client_id, data, occurred_at)
    VALUES (
        'order.' || NEW.status,
        NEW.payer_id,
        jsonb_build_object(
            'orderId', NEW.correlation_id,
            'orderNo', NEW.order_no,
            'recipientId', NEW.recipient_id,
            'orderType', NEW.order_type,
            'paymentType', NEW.payment_type,
            'points', trim_scale(NEW.point_amount)::text,
            'pointsPrice', trim_scale(NEW.purchased_point_amount)::text,
            'moneyAmount', trim_scale(NEW.money_amount)::text,
            'occasionId', NEW.point_occasion_id),
        NEW.updated_at);
    RETURN NULL;
END;
$$;
-- A point order paid with points is written successful; a card order moves there, or to
-- payment_failed, from initial_order.
CREATE TRIGGER point_orders_outcome_made
    AFTER INSERT ON point_orders
    FOR EACH ROW
    WHEN (NEW.status IN ('successful', 'payment_failed') AND NEW.order_no IS NOT NULL)
    EXECUTE FUNCTION point_orders_outcome_event();
CREATE TRIGGER point_orders_outcome_reached
    AFTER UPDATE OF status ON point_orders
    FOR EACH ROW
    WHEN (OLD.status IS DISTINCT FROM NEW.status
          AND NEW.status IN ('successful', 'payment_failed') AND NEW.order_no IS NOT NULL)
    EXECUTE FUNCTION point_orders_outcome_event();

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
