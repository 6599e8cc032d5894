ALTER TABLE unapplied_captures DROP CONSTRAINT unapplied_captures_reason_check;
ALTER TABLE unapplied_captures ADD CONSTRAINT unapplied_captures_reason_check CHECK (reason IN (
    'already_successful', 'payment_failed', 'not_payable', 'unknown_order',
    'amount_mismatch', 'currency_mismatch', 'unreadable'));
DROP INDEX payment_attempts_payment;
DROP TABLE settlement_checks;
ALTER TABLE payment_events DROP COLUMN body;
DROP TABLE worker_leases;
DROP TABLE payment_syncs;
