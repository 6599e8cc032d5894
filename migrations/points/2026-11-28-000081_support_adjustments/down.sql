DROP TABLE support_adjustments;
ALTER TABLE point_entries DROP CONSTRAINT point_entries_support_reference;
ALTER TABLE point_entries DROP CONSTRAINT point_entries_sign;
ALTER TABLE point_entries ADD CONSTRAINT point_entries_sign CHECK (CASE
    WHEN kind IN ('spend', 'gift_sent', 'expiry') THEN points < 0
    WHEN kind = 'adjustment' THEN points <> 0
    ELSE points > 0
END);
ALTER TABLE point_entries DROP CONSTRAINT point_entries_kind_check;
ALTER TABLE point_entries ADD CONSTRAINT point_entries_kind_check CHECK (kind IN (
    'earn', 'spend', 'gift_sent', 'gift_received', 'purchase', 'gift_card_credit', 'adjustment',
    'expiry'));
