-- The loyalty back office over the catalog (docs/decisions.md, "The loyalty back office"):
-- gift-code batches and the earn-rate table, changed by operators through the operator API
-- and written by the order service only, each change with its audit row in one transaction.

-- Every change an operator makes here: who (the operator token's `sub` and role, as the
-- operator service relays them), what, the record before and after. Append-only.
CREATE TABLE back_office_audit (
    id          BIGSERIAL PRIMARY KEY,
    operator_id TEXT NOT NULL CHECK (operator_id <> ''),
    role        TEXT NOT NULL CHECK (role <> ''),
    action      TEXT NOT NULL,
    -- What was changed: `gift-code-batch:<id>`, `earn-rates`.
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

-- A batch of gift codes issued at once. `reference` is the issuer's own (a ticket, a
-- campaign): sending a batch again with it answers the first rather than issuing twice.
CREATE TABLE gift_card_batches (
    id         BIGSERIAL PRIMARY KEY,
    reference  TEXT NOT NULL UNIQUE CHECK (reference <> ''),
    code_count INTEGER NOT NULL CHECK (code_count > 0),
    points     NUMERIC NOT NULL CHECK (points > 0),
    prefix     TEXT,
    expires_at TIMESTAMPTZ,
    created_by TEXT NOT NULL CHECK (created_by <> ''),
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- Codes loaded by `seed` have no batch and no expiry. A withdrawn code is inactive with the
-- time it was withdrawn; only a code nobody redeemed is ever withdrawn.
ALTER TABLE gift_card_codes
    ADD COLUMN batch_id     BIGINT REFERENCES gift_card_batches (id),
    ADD COLUMN expires_at   TIMESTAMPTZ,
    ADD COLUMN withdrawn_at TIMESTAMPTZ,
    ADD CONSTRAINT gift_card_codes_withdrawn_inactive CHECK (withdrawn_at IS NULL OR NOT active);
CREATE INDEX gift_card_codes_batch ON gift_card_codes (batch_id, code) WHERE batch_id IS NOT NULL;

-- Each option's version: a change of its value takes the next number of a sequence, which
-- never goes back, so an edit begun on a version is refused once another change (through the
-- back office or `seed`, or after an unset and a set again) has been made; a write that
-- changes nothing keeps it.
CREATE SEQUENCE system_configs_version;
ALTER TABLE system_configs ADD COLUMN version BIGINT NOT NULL DEFAULT nextval('system_configs_version');

CREATE FUNCTION system_configs_next_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.value IS DISTINCT FROM OLD.value THEN
        NEW.version := nextval('system_configs_version');
        NEW.updated_at := now();
    ELSE
        NEW.version := OLD.version;
    END IF;
    RETURN NEW;
END;
$$;
CREATE TRIGGER system_configs_next_version
    BEFORE UPDATE ON system_configs
    FOR EACH ROW EXECUTE FUNCTION system_configs_next_version();

-- A code's state, written once: what the back office lists and counts. A redemption decides
-- (being credited while pending, then credited); without one, a withdrawn code is withdrawn,
-- an expired one expired, any other unused.
CREATE VIEW gift_card_code_states AS
SELECT c.code,
       c.batch_id,
       CASE
           WHEN r.status = 'credited' THEN 'credited'
           WHEN r.status = 'pending' THEN 'being_credited'
           WHEN NOT c.active THEN 'withdrawn'
           WHEN c.expires_at <= now() THEN 'expired'
           ELSE 'unused'
       END AS state,
       r.client_id,
       r.created_at AS redeemed_at,
       r.credited_at
FROM gift_card_codes c
LEFT JOIN gift_card_redemptions r ON r.code = c.code;
