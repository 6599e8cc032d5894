DROP TABLE housekeeping_runs;
