ALTER TABLE services DROP COLUMN parent_id, DROP COLUMN hierarchy_role;
