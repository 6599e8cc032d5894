DROP TABLE gift_card_tries; DROP TABLE gift_card_redemptions;
