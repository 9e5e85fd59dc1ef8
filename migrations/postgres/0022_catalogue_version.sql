-- The catalogue's version (issue 17): see SQLite's 0022_catalogue_version.sql.
-- One statement-level trigger moves it on once per statement that changes the
-- records (TRUNCATE too).
INSERT INTO cache_versions (name, version) VALUES ('catalogue', 1);

CREATE FUNCTION catalogue_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE cache_versions SET version = version + 1 WHERE name = 'catalogue';
    RETURN NULL;
END
$$;
CREATE TRIGGER catalogue_version AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON records
    FOR EACH STATEMENT EXECUTE FUNCTION catalogue_version();
