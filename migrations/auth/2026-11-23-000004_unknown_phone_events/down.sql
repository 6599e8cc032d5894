DELETE FROM otp_events WHERE kind = 'unknown_phone';
ALTER TABLE otp_events DROP CONSTRAINT otp_events_kind_check;
ALTER TABLE otp_events ADD CONSTRAINT otp_events_kind_check
    CHECK (kind IN ('sms_sent', 'code_tried'));
