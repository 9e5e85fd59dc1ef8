-- The staff accounts' version (issue 17): see SQLite's 0020_staff_version.sql.
INSERT INTO cache_versions (name, version) VALUES ('staff', 1);

CREATE FUNCTION staff_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE cache_versions SET version = version + 1 WHERE name = 'staff';
    RETURN NULL;
END
$$;
CREATE TRIGGER staff_version AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON staff_users
    FOR EACH STATEMENT EXECUTE FUNCTION staff_version();
CREATE TRIGGER staff_version AFTER UPDATE OR DELETE OR TRUNCATE ON branches
    FOR EACH STATEMENT EXECUTE FUNCTION staff_version();
