-- The parent/child hierarchy. Services that existed before it become `parent` (the
-- column's default). Only a child can hold a parent, and never itself.
ALTER TABLE services
    ADD COLUMN hierarchy_role TEXT NOT NULL DEFAULT 'parent'
        CHECK (hierarchy_role IN ('parent', 'standalone', 'child')),
    ADD COLUMN parent_id BIGINT REFERENCES services (id) ON DELETE SET NULL,
    ADD CONSTRAINT services_only_children_have_parents CHECK (parent_id IS NULL OR hierarchy_role = 'child'),
    ADD CONSTRAINT services_not_own_parent CHECK (parent_id <> id);
CREATE INDEX services_children ON services (parent_id, ordering) WHERE parent_id IS NOT NULL;
