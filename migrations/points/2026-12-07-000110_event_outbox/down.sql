DROP TRIGGER point_entries_event ON point_entries;
DROP FUNCTION point_entries_event();
DROP TABLE event_outbox;
