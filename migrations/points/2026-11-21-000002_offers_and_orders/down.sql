DROP TABLE point_orders;
DROP TABLE points_faq;
DROP TABLE point_occasions;
DROP TABLE point_offers;
