-- The catalogue's version (issue 17): catalog.Search keeps what a search's words
-- match (how many, the best in rank order, the pages of the title and year
-- orders) in memory under this version, which moves on in the transaction that
-- adds, changes or deletes a record, so that every process serving the database
-- reads the matches again after any change to the records (0018_cache_versions.sql).
-- What depends on the copies (facets, availability, the filters) is read at
-- every search: a check-out or check-in moves no version.
INSERT INTO cache_versions (name, version) VALUES ('catalogue', 1);

CREATE TRIGGER catalogue_version_insert AFTER INSERT ON records
BEGIN
    UPDATE cache_versions SET version = version + 1 WHERE name = 'catalogue';
END;
CREATE TRIGGER catalogue_version_update AFTER UPDATE ON records
BEGIN
    UPDATE cache_versions SET version = version + 1 WHERE name = 'catalogue';
END;
CREATE TRIGGER catalogue_version_delete AFTER DELETE ON records
BEGIN
    UPDATE cache_versions SET version = version + 1 WHERE name = 'catalogue';
END;
