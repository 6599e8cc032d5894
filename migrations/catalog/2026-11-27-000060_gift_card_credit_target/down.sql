DROP TRIGGER gift_card_redemptions_credit_guard ON gift_card_redemptions;
DROP FUNCTION gift_card_redemptions_credit_guard();
ALTER TABLE gift_card_redemptions
    DROP CONSTRAINT gift_card_redemptions_target_known,
    DROP CONSTRAINT gift_card_redemptions_credit_reference_key,
    DROP COLUMN taken_at,
    DROP COLUMN credit_reference,
    DROP COLUMN credit_target;
