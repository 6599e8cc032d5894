DROP TRIGGER back_office_catalog_event ON back_office_audit;
DROP FUNCTION back_office_catalog_event();
DROP TRIGGER unapplied_captures_event ON unapplied_captures;
DROP FUNCTION unapplied_captures_event();
DROP TRIGGER point_orders_outcome_reached ON point_orders;
DROP TRIGGER point_orders_outcome_made ON point_orders;
DROP FUNCTION point_orders_outcome_event();
DELETE FROM event_outbox WHERE type NOT IN ('points.credited', 'points.spent', 'points.expired', 'points.expiring');
ALTER TABLE event_outbox DROP CONSTRAINT event_outbox_client_named;
ALTER TABLE event_outbox ALTER COLUMN client_id SET NOT NULL;
ALTER TABLE event_outbox DROP CONSTRAINT event_outbox_type_check;
ALTER TABLE event_outbox ADD CONSTRAINT event_outbox_type_check
    CHECK (type IN ('points.credited', 'points.spent', 'points.expired', 'points.expiring'));
