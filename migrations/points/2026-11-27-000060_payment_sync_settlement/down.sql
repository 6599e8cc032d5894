DROP TABLE settlement_checks;
ALTER TABLE payment_events DROP COLUMN body;
DROP TABLE worker_leases;
DROP TABLE payment_syncs;
