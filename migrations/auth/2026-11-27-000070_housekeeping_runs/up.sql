-- `<service> housekeeping` (a daily CronJob) deletes the rows written per request once no
-- rule reads them, and records each table's last run here: the CronJob's process is not
-- scraped, so every serving process exports these rows as the housekeeping_* gauges, which
-- the alerts watch. One row per table, overwritten by each run.
CREATE TABLE housekeeping_runs (
    table_name   TEXT PRIMARY KEY,
    rows_removed BIGINT NOT NULL CHECK (rows_removed >= 0),
    finished_at  TIMESTAMPTZ NOT NULL
);

-- What housekeeping looks rows up by: expired login codes, and client events past their
-- window (otp_events has otp_events_age already).
CREATE INDEX otp_codes_expiry ON otp_codes (expires_at);
CREATE INDEX client_events_age ON client_events (created_at);
