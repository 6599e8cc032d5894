-- The auth service's statement for one caller lookup (GET /api/v1/users with a legacy
-- token): the token's SHA-256 joined to its client. The hash is computed here by PostgreSQL
-- (the service computes it itself), which only makes this baseline slower.
\set cid random(200001, 300000)
SELECT c.client_id, c.odoo_id, c.contact_phone, c.status, c.email_address, c.first_name, c.last_name, c.sex, c.birth_date, c.receive_offers, c.push_enabled, c.is_food_truck_user, c.is_cod_disabled FROM legacy_tokens t INNER JOIN clients c ON c.client_id = t.client_id WHERE t.token_hash = sha256(convert_to('bench-token-' || :cid, 'UTF8')) LIMIT 1;
