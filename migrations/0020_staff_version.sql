-- The staff accounts' version (issue 17): the staff site reads the signed-in
-- account on every request; it keeps the accounts it read in memory with this
-- version (see 0018_cache_versions.sql), moved on in the transaction that
-- changes an account or a branch (an account shows its branch's code and name).
INSERT INTO cache_versions (name, version) VALUES ('staff', 1);

CREATE TRIGGER staff_version_insert AFTER INSERT ON staff_users
BEGIN
    UPDATE cache_versions SET version = version + 1 WHERE name = 'staff';
END;
CREATE TRIGGER staff_version_update AFTER UPDATE ON staff_users
BEGIN
    UPDATE cache_versions SET version = version + 1 WHERE name = 'staff';
END;
CREATE TRIGGER staff_version_delete AFTER DELETE ON staff_users
BEGIN
    UPDATE cache_versions SET version = version + 1 WHERE name = 'staff';
END;
CREATE TRIGGER staff_version_branch_update AFTER UPDATE ON branches
BEGIN
    UPDATE cache_versions SET version = version + 1 WHERE name = 'staff';
END;
CREATE TRIGGER staff_version_branch_delete AFTER DELETE ON branches
BEGIN
    UPDATE cache_versions SET version = version + 1 WHERE name = 'staff';
END;
