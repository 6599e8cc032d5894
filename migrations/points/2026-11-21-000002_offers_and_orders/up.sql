CREATE TABLE point_offers (
    -- 24 hex characters from the legacy document store, kept in lower case.
    id                     CHAR(24) PRIMARY KEY CHECK (id ~ '^[0-9a-f]{24}$'),
    point_amount           NUMERIC NOT NULL CHECK (point_amount > 0),
    -- Null when the offer has no points price.
    purchased_point_amount NUMERIC CHECK (purchased_point_amount > 0),
    amount                 NUMERIC(12, 2) NOT NULL CHECK (amount >= 0),
    sequence               INTEGER,
    legacy_id              INTEGER,
    active                 BOOLEAN NOT NULL DEFAULT true,
    deleted                BOOLEAN NOT NULL DEFAULT false,
    created_at             TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at             TIMESTAMPTZ NOT NULL DEFAULT now()
);
-- The listing order: sequence, then legacy id, then id; offers without one sort last.
CREATE INDEX point_offers_listing ON point_offers (sequence NULLS LAST, legacy_id NULLS LAST, id)
    WHERE active AND NOT deleted;

CREATE TABLE point_occasions (
    id          CHAR(24) PRIMARY KEY CHECK (id ~ '^[0-9a-f]{24}$'),
    occasion_en TEXT NOT NULL,
    occasion_ar TEXT,
    is_custom   SMALLINT NOT NULL DEFAULT 0 CHECK (is_custom IN (0, 1)),
    active      BOOLEAN NOT NULL DEFAULT true,
    created_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at  TIMESTAMPTZ NOT NULL DEFAULT now()
);

CREATE TABLE points_faq (
    position    INTEGER PRIMARY KEY CHECK (position >= 0),
    question_en TEXT NOT NULL,
    answer_en   TEXT NOT NULL,
    question_ar TEXT NOT NULL,
    answer_ar   TEXT NOT NULL
);

CREATE SEQUENCE point_order_no_seq START WITH 100000 MINVALUE 100000;

CREATE TABLE point_orders (
    correlation_id         UUID PRIMARY KEY,
    -- Null only on orders copied from the legacy system.
    order_no               BIGINT UNIQUE DEFAULT nextval('point_order_no_seq'),
    payer_id               BIGINT NOT NULL CHECK (payer_id > 0),
    recipient_id           BIGINT NOT NULL CHECK (recipient_id > 0),
    -- Null on legacy copies, which name no offer.
    point_offer_id         CHAR(24),
    status                 TEXT NOT NULL CHECK (status IN ('initial_order', 'paid', 'payment_failed', 'successful')),
    payment_status         TEXT CHECK (payment_status IN ('CAPTURED', 'FAILED', 'AUTHORIZED')),
    point_amount           NUMERIC NOT NULL CHECK (point_amount > 0),
    purchased_point_amount NUMERIC,
    money_amount           NUMERIC(12, 2) NOT NULL CHECK (money_amount >= 0),
    payment_type           TEXT NOT NULL CHECK (payment_type IN ('point', 'checkout')),
    order_type             TEXT NOT NULL CHECK (order_type IN ('gift', 'transfer')),
    point_occasion_id      CHAR(24),
    occasion               TEXT,
    -- Best-effort debugging note of the last pay call.
    payment_provider       TEXT,
    payment_reference      TEXT,
    created_at             TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at             TIMESTAMPTZ NOT NULL DEFAULT now()
);
ALTER SEQUENCE point_order_no_seq OWNED BY point_orders.order_no;
CREATE INDEX point_orders_payer ON point_orders (payer_id);
CREATE INDEX point_orders_recipient ON point_orders (recipient_id);
