DROP TABLE back_office_reads;
DROP FUNCTION back_office_reads_append_only();
