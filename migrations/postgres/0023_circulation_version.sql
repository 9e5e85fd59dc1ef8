-- The circulation rules' and the branch calendars' version (issue 17): see
-- SQLite's 0023_circulation_version.sql. One statement-level trigger a table
-- moves it on once per statement that changes it (TRUNCATE too).
INSERT INTO cache_versions (name, version) VALUES ('circulation', 1);

CREATE FUNCTION circulation_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE cache_versions SET version = version + 1 WHERE name = 'circulation';
    RETURN NULL;
END
$$;
CREATE TRIGGER circulation_version AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON circ_rules
    FOR EACH STATEMENT EXECUTE FUNCTION circulation_version();
CREATE TRIGGER circulation_version AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON closed_days
    FOR EACH STATEMENT EXECUTE FUNCTION circulation_version();
CREATE TRIGGER circulation_version AFTER UPDATE OR DELETE OR TRUNCATE ON branches
    FOR EACH STATEMENT EXECUTE FUNCTION circulation_version();
CREATE TRIGGER circulation_version AFTER UPDATE OR DELETE OR TRUNCATE ON patron_categories
    FOR EACH STATEMENT EXECUTE FUNCTION circulation_version();
CREATE TRIGGER circulation_version AFTER UPDATE OR DELETE OR TRUNCATE ON item_types
    FOR EACH STATEMENT EXECUTE FUNCTION circulation_version();
