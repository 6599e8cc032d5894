DROP TRIGGER expiry_notices_event ON expiry_notices;
DROP FUNCTION expiry_notices_event();
DROP TABLE expiry_notices;
DROP TRIGGER point_entries_event ON point_entries;
DROP FUNCTION point_entries_event();
DROP TABLE event_outbox;
