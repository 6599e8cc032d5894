ALTER TABLE payment_syncs ALTER COLUMN generation SET DEFAULT 0;
DROP SEQUENCE payment_sync_generations;
ALTER TABLE payment_syncs DROP COLUMN disagreements;
DROP TABLE payment_sync_readings;
