DROP TABLE back_office_audit;
DROP FUNCTION back_office_audit_append_only();
