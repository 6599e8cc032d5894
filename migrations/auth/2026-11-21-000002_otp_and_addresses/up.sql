-- One live login code per client. Only an HMAC of the code is kept (keyed with a server
-- secret), so a database leak does not reveal live codes even though there are only
-- 10 000 of them.
CREATE TABLE otp_codes (
    client_id       BIGINT PRIMARY KEY REFERENCES clients (client_id) ON DELETE CASCADE,
    code_hash       BYTEA NOT NULL,
    expires_at      TIMESTAMPTZ NOT NULL,
    failed_attempts INTEGER NOT NULL DEFAULT 0 CHECK (failed_attempts >= 0),
    created_at      TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- What the rate limits count: SMS actually sent and codes actually tried, by phone and by
-- client address. Rows older than a day are pruned as new ones arrive.
CREATE TABLE otp_events (
    id         BIGSERIAL PRIMARY KEY,
    kind       TEXT NOT NULL CHECK (kind IN ('sms_sent', 'code_tried')),
    phone      TEXT NOT NULL,
    ip         TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX otp_events_by_phone ON otp_events (kind, phone, created_at);
CREATE INDEX otp_events_by_ip ON otp_events (kind, ip, created_at);
CREATE INDEX otp_events_age ON otp_events (created_at);

-- Saved delivery addresses. Ids are 24 hex characters like the legacy system's; addresses
-- copied from it may also carry their old numeric id, which PUT accepts.
CREATE TABLE addresses (
    id           CHAR(24) PRIMARY KEY CHECK (id ~ '^[0-9a-f]{24}$'),
    legacy_id    BIGINT UNIQUE,
    client_id    BIGINT NOT NULL REFERENCES clients (client_id) ON DELETE CASCADE,
    label        TEXT NOT NULL,
    address_line TEXT NOT NULL,
    city         TEXT NOT NULL,
    district     TEXT,
    building     TEXT,
    latitude     DOUBLE PRECISION NOT NULL CHECK (latitude BETWEEN -90 AND 90),
    longitude    DOUBLE PRECISION NOT NULL CHECK (longitude BETWEEN -180 AND 180),
    notes        TEXT,
    is_default   BOOLEAN NOT NULL DEFAULT false,
    created_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at   TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX addresses_by_client ON addresses (client_id, created_at, id);
-- At most one default address per client.
CREATE UNIQUE INDEX addresses_one_default ON addresses (client_id) WHERE is_default;
