DROP INDEX gift_card_tries_age;
DROP TABLE housekeeping_runs;
