DROP TABLE operator_audit;
DROP TRIGGER services_parent_keeps_role_while_it_has_children ON services;
DROP FUNCTION services_parent_keeps_role_while_it_has_children();
DROP TRIGGER services_parent_must_be_parent ON services;
DROP FUNCTION services_parent_must_be_parent();
