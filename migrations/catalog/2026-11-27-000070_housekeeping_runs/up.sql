-- `<service> housekeeping` (a daily CronJob) deletes the rows written per request once no
-- rule reads them, and records each table's last run here: the CronJob's process is not
-- scraped, so every serving process exports these rows as the housekeeping_* gauges, which
-- the alerts watch. One row per table, overwritten by each run.
CREATE TABLE housekeeping_runs (
    table_name   TEXT PRIMARY KEY,
    rows_removed BIGINT NOT NULL CHECK (rows_removed >= 0),
    finished_at  TIMESTAMPTZ NOT NULL
);

-- What housekeeping looks wrong guesses up by (the limits' indexes lead with the client or
-- the address).
CREATE INDEX gift_card_tries_age ON gift_card_tries (created_at);
