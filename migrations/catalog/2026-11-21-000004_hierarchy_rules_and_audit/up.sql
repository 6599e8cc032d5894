-- The hierarchy rules held by the database as well as by the code: a child's parent must
-- be a `parent` (its row is share-locked while the child is written, so it cannot change
-- role under a concurrent assignment), and a parent cannot leave the role while it still
-- has children (the code releases them first, in the same transaction).
CREATE FUNCTION services_parent_must_be_parent() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.parent_id IS NOT NULL THEN
        PERFORM 1 FROM services WHERE id = NEW.parent_id AND hierarchy_role = 'parent' FOR SHARE;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'service % cannot be the parent of service %: it is not a parent', NEW.parent_id, NEW.id
                USING ERRCODE = 'check_violation', CONSTRAINT = 'services_parent_is_parent';
        END IF;
    END IF;
    RETURN NEW;
END;
$$;
CREATE TRIGGER services_parent_must_be_parent
    BEFORE INSERT OR UPDATE OF parent_id ON services
    FOR EACH ROW EXECUTE FUNCTION services_parent_must_be_parent();

CREATE FUNCTION services_parent_keeps_role_while_it_has_children() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.hierarchy_role = 'parent' AND NEW.hierarchy_role <> 'parent'
       AND EXISTS (SELECT 1 FROM services WHERE parent_id = OLD.id) THEN
        RAISE EXCEPTION 'service % still has children', OLD.id
            USING ERRCODE = 'check_violation', CONSTRAINT = 'services_parent_without_children';
    END IF;
    RETURN NEW;
END;
$$;
CREATE TRIGGER services_parent_keeps_role_while_it_has_children
    BEFORE UPDATE OF hierarchy_role ON services
    FOR EACH ROW EXECUTE FUNCTION services_parent_keeps_role_while_it_has_children();

-- Every operator write, with the hierarchy before and after, in the write's transaction.
CREATE TABLE operator_audit (
    id          BIGSERIAL PRIMARY KEY,
    operator_id TEXT NOT NULL,
    role        TEXT NOT NULL,
    action      TEXT NOT NULL,
    service_ids BIGINT[] NOT NULL,
    before      JSONB NOT NULL,
    after       JSONB NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX operator_audit_newest ON operator_audit (created_at DESC, id DESC);
