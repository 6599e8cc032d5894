-- Who looked at which client's points through the back office (docs/decisions.md, "Reads
-- leave a trace"): one row per read of a client's balance and history, written before the
-- answer is sent, so that no read goes unrecorded. A trail of its own, apart from the
-- changes' (`back_office_audit`, which every admin reads): only a super_admin reads this one.
CREATE TABLE back_office_reads (
    id          BIGSERIAL PRIMARY KEY,
    operator_id TEXT NOT NULL CHECK (operator_id <> ''),
    role        TEXT NOT NULL CHECK (role <> ''),
    client_id   BIGINT NOT NULL CHECK (client_id > 0),
    created_at  TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX back_office_reads_newest ON back_office_reads (created_at DESC, id DESC);

CREATE FUNCTION back_office_reads_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'back_office_reads is append-only: % refused', TG_OP USING ERRCODE = 'restrict_violation';
END;
$$;
CREATE TRIGGER back_office_reads_append_only
    BEFORE UPDATE OR DELETE ON back_office_reads
    FOR EACH ROW EXECUTE FUNCTION back_office_reads_append_only();
-- A row trigger does not see TRUNCATE: refused as a statement.
CREATE TRIGGER back_office_reads_no_truncate
    BEFORE TRUNCATE ON back_office_reads
    FOR EACH STATEMENT EXECUTE FUNCTION back_office_reads_append_only();
