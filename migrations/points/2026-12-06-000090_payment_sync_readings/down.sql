ALTER TABLE payment_syncs DROP COLUMN disagreements;
DROP TABLE payment_sync_readings;
