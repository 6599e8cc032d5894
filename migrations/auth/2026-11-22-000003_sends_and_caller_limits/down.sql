DROP TABLE client_events;
ALTER TABLE otp_codes DROP COLUMN sent_at;
