-- Points for the 100 000 benchmark clients: one earn entry of 100 000 000 each and the cached
-- balance that matches it; and 1 000 offers. The hot payer (3b) spends 19 points an order in
-- three rounds of the service and of pgbench: 56 000 orders on a good day ran dry 1 000 000
-- points, and its last orders were refused; 100 000 000 lasts five million orders.
INSERT INTO point_accounts (client_id, balance)
SELECT g, 100000000 FROM generate_series(200001, 300000) g
ON CONFLICT (client_id) DO NOTHING;

INSERT INTO point_entries (client_id, kind, points, created_at)
SELECT g, 'earn', 100000000, now() - interval '10 days'
FROM generate_series(200001, 300000) g;

INSERT INTO point_offers (id, point_amount, purchased_point_amount, amount, sequence, active, deleted)
SELECT lpad(to_hex(g), 24, 'b'), 10 + g % 500, 12 + g % 600, (5 + g % 100)::numeric(12, 2), g, true, false
FROM generate_series(1, 1000) g
ON CONFLICT (id) DO NOTHING;
ANALYZE point_accounts;
ANALYZE point_entries;
ANALYZE point_offers;
