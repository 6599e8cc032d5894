DROP TABLE unapplied_captures;
DROP TABLE payment_attempts;
