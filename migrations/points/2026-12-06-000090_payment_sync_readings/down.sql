UPDATE payment_attempts SET state = 'lost' WHERE state = 'unsent';
ALTER TABLE payment_attempts DROP CONSTRAINT payment_attempts_state_check;
ALTER TABLE payment_attempts ADD CONSTRAINT payment_attempts_state_check
    CHECK (state IN ('started', 'answered', 'refused', 'lost'));
ALTER TABLE payment_syncs ALTER COLUMN generation SET DEFAULT 0;
DROP SEQUENCE payment_sync_generations;
ALTER TABLE payment_syncs DROP COLUMN disagreements;
DROP TABLE payment_sync_readings;
