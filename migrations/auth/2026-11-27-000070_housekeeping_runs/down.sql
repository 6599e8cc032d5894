DROP INDEX client_events_age;
DROP INDEX otp_codes_expiry;
DROP TABLE housekeeping_runs;
