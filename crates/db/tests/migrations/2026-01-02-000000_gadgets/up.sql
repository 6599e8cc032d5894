-- Slow on purpose: two concurrent `migrate` runs overlap inside this migration unless the
-- advisory lock makes the second wait.
SELECT pg_sleep(0.3);
CREATE TABLE gadgets (id BIGSERIAL PRIMARY KEY);
