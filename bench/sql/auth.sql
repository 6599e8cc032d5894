-- 100 000 benchmark clients (ids 200001..300000), each with a legacy token
-- 'bench-token-<id>' stored as its SHA-256, as the auth service stores them.
INSERT INTO clients (client_id, odoo_id, contact_phone, status, first_name, last_name, sex,
                     receive_offers, push_enabled, test_mode)
SELECT g, g::text, '+9665' || lpad(g::text, 8, '0'), 'active', 'Bench', 'Client ' || g, g % 3,
       1, 1, true
FROM generate_series(200001, 300000) g
ON CONFLICT (client_id) DO NOTHING;

INSERT INTO legacy_tokens (token_hash, client_id, source)
SELECT sha256(convert_to('bench-token-' || g, 'UTF8')), g, 'legacy'
FROM generate_series(200001, 300000) g
ON CONFLICT (token_hash) DO NOTHING;
ANALYZE clients;
ANALYZE legacy_tokens;
