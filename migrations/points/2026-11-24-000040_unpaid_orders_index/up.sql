-- The create route counts a payer's unpaid checkout orders of the last 24 hours
-- (UNPAID_ORDERS_PER_CLIENT_PER_DAY); this keeps that count to the payer's unpaid rows.
CREATE INDEX point_orders_unpaid ON point_orders (payer_id, created_at) WHERE status = 'initial_order';
