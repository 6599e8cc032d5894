DROP TRIGGER back_office_catalog_event ON back_office_audit;
DROP FUNCTION back_office_catalog_event();
DROP TRIGGER gift_card_redemptions_event ON gift_card_redemptions;
DROP FUNCTION gift_card_redemptions_event();
DROP TABLE worker_leases;
DROP TABLE event_outbox;
