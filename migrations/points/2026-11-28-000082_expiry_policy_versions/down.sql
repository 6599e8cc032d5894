ALTER TABLE point_settings DROP COLUMN version;
