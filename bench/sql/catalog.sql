-- 200 000 stores: brand 9077 has 10 000 branches spread over Riyadh (the nearest-store
-- benchmark's brand), the rest belong to 500 other brands across Saudi Arabia.
INSERT INTO stores (id, merchant_id, real_merchant_id, name, latitude, longitude,
                    management_status, is_online, store_disabled_ordering)
SELECT 1000000 + g, 9000, 9077, 'Bench branch ' || g,
       24.55 + (g % 100) * 0.004 + (g * 7 % 13) * 0.0001,
       46.55 + (g / 100) * 0.004 + (g * 11 % 17) * 0.0001,
       'active', g % 10 <> 0, g % 50 = 0
FROM generate_series(1, 10000) g
ON CONFLICT (id) DO NOTHING;

INSERT INTO stores (id, merchant_id, real_merchant_id, name, latitude, longitude,
                    management_status, is_online, store_disabled_ordering)
SELECT 2000000 + g, 10000 + g % 500, 20000 + g % 500, 'Other store ' || g,
       17 + (g % 1000) * 0.012, 37 + (g / 1000) * 0.05,
       'active', true, false
FROM generate_series(1, 190000) g
ON CONFLICT (id) DO NOTHING;
ANALYZE stores;
