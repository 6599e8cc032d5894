-- The point service's statements for one point order paid with points (POST
-- /api/v2/client/point-orders, payment_type point, with an Idempotency-Key): the replay
-- check and offer read, then the transaction that claims the key, locks both accounts in id
-- order, writes the order, charges the payer, credits the recipient and reads the order back.
-- PAYER_MIN/PAYER_MAX choose many payers or one hot payer.
\set payer random(:payer_min, :payer_max)
\set friend random(200001, 300000)
\set nonce random(1, 1000000000)
-- The order's id, made here as the service makes it in memory (no round trip for it).
\set u1 random(0, 4294967295)
\set u2 random(0, 4294967295)
\set u3 random(0, 4294967295)
\set u4 random(0, 4294967295)
SELECT request_hash, correlation_id FROM idempotency_keys WHERE client_id = :payer AND key = 'pgbench-' || :nonce AND created_at > now() - interval '24 hours';
SELECT id, point_amount, purchased_point_amount, amount FROM point_offers WHERE id = '000000000000000000000001' OR (id = lpad(to_hex(7), 24, 'b') AND active AND NOT deleted) LIMIT 1;
BEGIN;
DELETE FROM idempotency_keys WHERE client_id = :payer AND key = 'pgbench-' || :nonce AND created_at <= now() - interval '24 hours';
INSERT INTO idempotency_keys (client_id, key, request_hash, correlation_id) VALUES (:payer, 'pgbench-' || :nonce, '\x00', (lpad(to_hex(:u1), 8, '0') || lpad(to_hex(:u2), 8, '0') || lpad(to_hex(:u3), 8, '0') || lpad(to_hex(:u4), 8, '0'))::uuid) ON CONFLICT DO NOTHING;
INSERT INTO point_accounts (client_id) VALUES (least(:payer, :friend)), (greatest(:payer, :friend)) ON CONFLICT DO NOTHING;
SELECT client_id, balance FROM point_accounts WHERE client_id IN (:payer, :friend) ORDER BY client_id FOR UPDATE;
INSERT INTO point_orders (correlation_id, payer_id, recipient_id, point_offer_id, status, point_amount, purchased_point_amount, money_amount, payment_type, order_type) VALUES ((lpad(to_hex(:u1), 8, '0') || lpad(to_hex(:u2), 8, '0') || lpad(to_hex(:u3), 8, '0') || lpad(to_hex(:u4), 8, '0'))::uuid, :payer, :friend, lpad(to_hex(7), 24, 'b'), 'successful', 17, 19, 12.00, 'point', 'transfer');
INSERT INTO point_entries (client_id, kind, points, order_correlation_id) VALUES (:payer, 'gift_sent', -19, (lpad(to_hex(:u1), 8, '0') || lpad(to_hex(:u2), 8, '0') || lpad(to_hex(:u3), 8, '0') || lpad(to_hex(:u4), 8, '0'))::uuid);
UPDATE point_accounts SET balance = balance + -19, updated_at = now() WHERE client_id = :payer RETURNING balance;
INSERT INTO point_entries (client_id, kind, points, order_correlation_id) VALUES (:friend, 'gift_received', 17, (lpad(to_hex(:u1), 8, '0') || lpad(to_hex(:u2), 8, '0') || lpad(to_hex(:u3), 8, '0') || lpad(to_hex(:u4), 8, '0'))::uuid);
UPDATE point_accounts SET balance = balance + 17, updated_at = now() WHERE client_id = :friend RETURNING balance;
SELECT correlation_id, order_no, status, payment_status, point_amount, purchased_point_amount, money_amount, payment_type, order_type FROM point_orders WHERE correlation_id = (lpad(to_hex(:u1), 8, '0') || lpad(to_hex(:u2), 8, '0') || lpad(to_hex(:u3), 8, '0') || lpad(to_hex(:u4), 8, '0'))::uuid;
COMMIT;
