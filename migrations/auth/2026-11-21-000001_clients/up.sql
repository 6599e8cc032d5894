-- Client accounts. Ids come from the legacy system (there is no sign-up route), so there
-- is no sequence.
CREATE TABLE clients (
    client_id          BIGINT PRIMARY KEY CHECK (client_id > 0),
    odoo_id            TEXT NOT NULL CHECK (odoo_id ~ '^[0-9]*$'),
    contact_phone      TEXT NOT NULL UNIQUE CHECK (contact_phone ~ '^\+[0-9]{7,15}$'),
    status             TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'inactive')),
    email_address      TEXT,
    first_name         TEXT,
    last_name          TEXT,
    -- 1 male, 2 female, 0 unknown.
    sex                SMALLINT NOT NULL DEFAULT 0 CHECK (sex IN (0, 1, 2)),
    birth_date         DATE,
    receive_offers     SMALLINT NOT NULL DEFAULT 0 CHECK (receive_offers IN (0, 1)),
    push_enabled       SMALLINT NOT NULL DEFAULT 0 CHECK (push_enabled IN (0, 1)),
    is_food_truck_user SMALLINT NOT NULL DEFAULT 0 CHECK (is_food_truck_user IN (0, 1)),
    is_cod_disabled    SMALLINT NOT NULL DEFAULT 0 CHECK (is_cod_disabled IN (0, 1)),
    -- Test-mode accounts get the fixed OTP_TEST_CODE and no SMS.
    test_mode          BOOLEAN NOT NULL DEFAULT false,
    created_at         TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at         TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- Legacy tokens are opaque strings; only their SHA-256 is kept, so a database leak does
-- not leak working tokens. Older tokens stay valid when a new one is minted.
CREATE TABLE legacy_tokens (
    token_hash BYTEA PRIMARY KEY CHECK (octet_length(token_hash) = 32),
    client_id  BIGINT NOT NULL REFERENCES clients (client_id) ON DELETE CASCADE,
    -- 'legacy': loaded from the legacy system; 'exchange': minted by exchange-token.
    source     TEXT NOT NULL CHECK (source IN ('legacy', 'exchange')),
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX legacy_tokens_client ON legacy_tokens (client_id);
