-- Points for the 100 000 benchmark clients: one earn entry of 1 000 000 each (enough for
-- every point order the benchmark makes) and the cached balance that matches it; and
-- 1 000 offers.
INSERT INTO point_accounts (client_id, balance)
SELECT g, 1000000 FROM generate_series(200001, 300000) g
ON CONFLICT (client_id) DO NOTHING;

INSERT INTO point_entries (client_id, kind, points, created_at)
SELECT g, 'earn', 1000000, now() - interval '10 days'
FROM generate_series(200001, 300000) g;

INSERT INTO point_offers (id, point_amount, purchased_point_amount, amount, sequence, active, deleted)
SELECT lpad(to_hex(g), 24, 'b'), 10 + g % 500, 12 + g % 600, (5 + g % 100)::numeric(12, 2), g, true, false
FROM generate_series(1, 1000) g
ON CONFLICT (id) DO NOTHING;
ANALYZE point_accounts;
ANALYZE point_entries;
ANALYZE point_offers;
