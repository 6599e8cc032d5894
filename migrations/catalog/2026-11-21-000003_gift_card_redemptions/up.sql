-- A gift-card code is redeemed once, ever: the unique code decides between concurrent
-- tries. A redemption stays `pending` until its credit is confirmed, so a retry after a
-- timeout credits the same redemption (the credit is idempotent by its id) and never a
-- second one.
CREATE TABLE gift_card_redemptions (
    id          BIGSERIAL PRIMARY KEY,
    code        TEXT NOT NULL UNIQUE REFERENCES gift_card_codes (code),
    client_id   BIGINT NOT NULL CHECK (client_id > 0),
    points      NUMERIC NOT NULL CHECK (points > 0),
    status      TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'credited')),
    created_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    credited_at TIMESTAMPTZ
);

-- Wrong codes tried, by client and by client address, for the guessing limits.
CREATE TABLE gift_card_tries (
    id         BIGSERIAL PRIMARY KEY,
    client_id  BIGINT NOT NULL,
    ip         TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX gift_card_tries_client ON gift_card_tries (client_id, created_at);
CREATE INDEX gift_card_tries_ip ON gift_card_tries (ip, created_at);
