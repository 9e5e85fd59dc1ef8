-- Versions of what a server keeps in memory (issue 17). Several processes may
-- serve one database (stacks serve on PostgreSQL; FastCGI processes on one
-- SQLite file), and a change one of them makes must reach the others' next
-- request. Each process keeps what it caches together with the version it read;
-- before using it, it reads the version here (one row by primary key) and reads
-- the data again only when the version moved.
--
-- The triggers move a version on in the very transaction that changes the data,
-- whatever code (or hand-written SQL) changes it: no writer can forget to.
CREATE TABLE cache_versions (
    name    TEXT PRIMARY KEY,
    version INTEGER NOT NULL
);
INSERT INTO cache_versions (name, version) VALUES ('preferences', 1);

CREATE TRIGGER preferences_version_insert AFTER INSERT ON preferences
BEGIN
    UPDATE cache_versions SET version = version + 1 WHERE name = 'preferences';
END;
CREATE TRIGGER preferences_version_update AFTER UPDATE ON preferences
BEGIN
    UPDATE cache_versions SET version = version + 1 WHERE name = 'preferences';
END;
CREATE TRIGGER preferences_version_delete AFTER DELETE ON preferences
BEGIN
    UPDATE cache_versions SET version = version + 1 WHERE name = 'preferences';
END;
