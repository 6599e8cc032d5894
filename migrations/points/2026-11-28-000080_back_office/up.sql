-- The loyalty back office (docs/decisions.md, "The loyalty back office"): every change an
-- operator makes to points data through the operator API, written by the point service in
-- the change's own transaction (so a change is never without its row, nor a row without its
-- change). Who: the operator token's `sub` and role, as the operator service relays them.
CREATE TABLE back_office_audit (
    id          BIGSERIAL PRIMARY KEY,
    operator_id TEXT NOT NULL CHECK (operator_id <> ''),
    role        TEXT NOT NULL CHECK (role <> ''),
    action      TEXT NOT NULL,
    -- What was changed: `offer:<id>`, `client:<id>`.
    subject     TEXT NOT NULL,
    before      JSONB NOT NULL,
    after       JSONB NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX back_office_audit_newest ON back_office_audit (created_at DESC, id DESC);

CREATE FUNCTION back_office_audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'back_office_audit is append-only: % refused', TG_OP USING ERRCODE = 'restrict_violation';
END;
$$;
CREATE TRIGGER back_office_audit_append_only
    BEFORE UPDATE OR DELETE ON back_office_audit
    FOR EACH ROW EXECUTE FUNCTION back_office_audit_append_only();
