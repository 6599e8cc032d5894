DROP INDEX point_orders_unpaid;
