DROP INDEX payment_events_payment;
DROP TABLE unapplied_captures;
DROP TABLE payment_attempts;
