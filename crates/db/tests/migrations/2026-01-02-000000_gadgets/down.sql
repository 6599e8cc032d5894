DROP TABLE gadgets;
