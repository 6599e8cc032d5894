DROP TABLE internal_credits; DROP TABLE payment_events; DROP TABLE idempotency_keys;
