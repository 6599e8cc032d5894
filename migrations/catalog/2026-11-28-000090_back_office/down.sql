DROP VIEW gift_card_code_states;
DROP TRIGGER system_configs_next_version ON system_configs;
DROP FUNCTION system_configs_next_version();
ALTER TABLE system_configs DROP COLUMN version;
DROP SEQUENCE system_configs_version;
DROP INDEX gift_card_codes_batch;
ALTER TABLE gift_card_codes
    DROP CONSTRAINT gift_card_codes_withdrawn_inactive,
    DROP COLUMN withdrawn_at,
    DROP COLUMN expires_at,
    DROP COLUMN batch_id;
DROP TABLE gift_card_batches;
DROP TRIGGER back_office_audit_append_only ON back_office_audit;
DROP FUNCTION back_office_audit_append_only();
DROP TABLE back_office_audit;
