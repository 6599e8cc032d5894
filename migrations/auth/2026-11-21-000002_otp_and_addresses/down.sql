DROP TABLE addresses; DROP TABLE otp_events; DROP TABLE otp_codes;
