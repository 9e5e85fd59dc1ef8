-- Versions of what a server keeps in memory (issue 17): see SQLite's
-- 0018_cache_versions.sql. One statement-level trigger moves the preferences'
-- version on once per statement that changes them.
CREATE TABLE cache_versions (
    name    text PRIMARY KEY,
    version bigint NOT NULL
);
INSERT INTO cache_versions (name, version) VALUES ('preferences', 1);

CREATE FUNCTION preferences_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE cache_versions SET version = version + 1 WHERE name = 'preferences';
    RETURN NULL;
END
$$;
CREATE TRIGGER preferences_version AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON preferences
    FOR EACH STATEMENT EXECUTE FUNCTION preferences_version();
