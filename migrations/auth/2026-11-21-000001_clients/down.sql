DROP TABLE legacy_tokens; DROP TABLE clients;
