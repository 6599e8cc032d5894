-- Phones with no account asked for on reset-otp or verify-otp, counted per client address
-- (OTP_UNKNOWN_PHONES_PER_IP_PER_HOUR): their answer says who is not a client, so without a
-- limit anyone could test every number. The phone column holds '' for these rows: the limit
-- is the address's, and the numbers of people who are not clients are not kept.
ALTER TABLE otp_events DROP CONSTRAINT otp_events_kind_check;
ALTER TABLE otp_events ADD CONSTRAINT otp_events_kind_check
    CHECK (kind IN ('sms_sent', 'code_tried', 'unknown_phone'));
