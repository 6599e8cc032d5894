DROP TABLE point_entries;
DROP FUNCTION point_entries_append_only();
DROP TABLE point_accounts;
DROP TABLE point_settings;
