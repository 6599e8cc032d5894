DROP TABLE banners;
DROP TABLE stores;
DROP TABLE gift_card_codes;
DROP TABLE system_configs;
DROP TABLE services;
