DROP TRIGGER back_office_catalog_event ON back_office_audit;
DROP FUNCTION back_office_catalog_event();
DROP TRIGGER unapplied_captures_event ON unapplied_captures;
DROP FUNCTION unapplied_captures_event();
DROP TRIGGER point_orders_outcome_reached ON point_orders;
DROP FUNCTION point_orders_outcome_reached();
DROP TRIGGER point_orders_outcomes_made ON point_orders;
DROP FUNCTION point_orders_outcomes_made();
DROP FUNCTION point_order_outcome(point_orders);
DELETE FROM event_outbox WHERE type NOT IN ('points.credited', 'points.spent', 'points.expired', 'points.expiring');
ALTER TABLE event_outbox DROP CONSTRAINT event_outbox_client_named;
ALTER TABLE event_outbox ALTER COLUMN client_id SET NOT NULL;
ALTER TABLE event_outbox DROP CONSTRAINT event_outbox_type_check;
ALTER TABLE event_outbox ADD CONSTRAINT event_outbox_type_check
    CHECK (type IN ('points.credited', 'points.spent', 'points.expired', 'points.expiring'));
DROP TRIGGER point_entries_events ON point_entries;
DROP FUNCTION point_entries_events();
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
DROP INDEX event_outbox_unpublished;
CREATE INDEX event_outbox_unpublished ON event_outbox (id, written_at) WHERE published_at IS NULL;
ALTER TABLE event_outbox ADD CONSTRAINT event_outbox_event_id_key UNIQUE (event_id);
