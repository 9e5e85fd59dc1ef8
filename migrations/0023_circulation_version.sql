-- The circulation rules' and the branch calendars' version (issue 17): a
-- server resolves a checkout's rule and computes its due date from the rules
-- and the calendar it keeps in memory under this version (see
-- 0018_cache_versions.sql), read with the session at the start of each
-- request, instead of reading them under the write lock every checkout holds.
-- It moves on in the transaction that changes a rule, a closed day, a branch
-- (its weekly closures and closing time) or a name a rule shows.
INSERT INTO cache_versions (name, version) VALUES ('circulation', 1);

CREATE TRIGGER circulation_version_rule_insert AFTER INSERT ON circ_rules
BEGIN
    UPDATE cache_versions SET version = version + 1 WHERE name = 'circulation';
END;
CREATE TRIGGER circulation_version_rule_update AFTER UPDATE ON circ_rules
BEGIN
    UPDATE cache_versions SET version = version + 1 WHERE name = 'circulation';
END;
CREATE TRIGGER circulation_version_rule_delete AFTER DELETE ON circ_rules
BEGIN
    UPDATE cache_versions SET version = version + 1 WHERE name = 'circulation';
END;
CREATE TRIGGER circulation_version_closed_insert AFTER INSERT ON closed_days
BEGIN
    UPDATE cache_versions SET version = version + 1 WHERE name = 'circulation';
END;
CREATE TRIGGER circulation_version_closed_update AFTER UPDATE ON closed_days
BEGIN
    UPDATE cache_versions SET version = version + 1 WHERE name = 'circulation';
END;
CREATE TRIGGER circulation_version_closed_delete AFTER DELETE ON closed_days
BEGIN
    UPDATE cache_versions SET version = version + 1 WHERE name = 'circulation';
END;
CREATE TRIGGER circulation_version_branch_update AFTER UPDATE ON branches
BEGIN
    UPDATE cache_versions SET version = version + 1 WHERE name = 'circulation';
END;
CREATE TRIGGER circulation_version_branch_delete AFTER DELETE ON branches
BEGIN
    UPDATE cache_versions SET version = version + 1 WHERE name = 'circulation';
END;
CREATE TRIGGER circulation_version_category_update AFTER UPDATE ON patron_categories
BEGIN
    UPDATE cache_versions SET version = version + 1 WHERE name = 'circulation';
END;
CREATE TRIGGER circulation_version_category_delete AFTER DELETE ON patron_categories
BEGIN
    UPDATE cache_versions SET version = version + 1 WHERE name = 'circulation';
END;
CREATE TRIGGER circulation_version_item_type_update AFTER UPDATE ON item_types
BEGIN
    UPDATE cache_versions SET version = version + 1 WHERE name = 'circulation';
END;
CREATE TRIGGER circulation_version_item_type_delete AFTER DELETE ON item_types
BEGIN
    UPDATE cache_versions SET version = version + 1 WHERE name = 'circulation';
END;
