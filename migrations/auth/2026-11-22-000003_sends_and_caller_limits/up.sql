-- A code is stored (and committed) before its SMS goes out, so that no transaction or
-- pooled connection waits on the gateway. Until the send is confirmed `sent_at` is null;
-- an unconfirmed code counts as live (reset-otp sends nothing) only for as long as a send
-- can take, so a crash between the commit and the send cannot block reset-otp for the
-- code's 3 minutes. Codes of test-mode accounts are never sent and count as sent.
ALTER TABLE otp_codes ADD COLUMN sent_at TIMESTAMPTZ;
UPDATE otp_codes SET sent_at = created_at;

-- What the per-client limits count: client lookups by phone and legacy tokens minted by
-- exchange-token, per client and rolling hour. A client's rows older than the window are
-- pruned when it adds one, so the table holds at most one window of rows per client.
CREATE TABLE client_events (
    id         BIGSERIAL PRIMARY KEY,
    kind       TEXT NOT NULL CHECK (kind IN ('client_lookup', 'legacy_token')),
    client_id  BIGINT NOT NULL REFERENCES clients (client_id) ON DELETE CASCADE,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX client_events_by_client ON client_events (kind, client_id, created_at);
