-- A copy cataloguing target has no character set of its own any more: the
-- ISO 2709 reader takes a record whose leader does not declare UTF-8 as UTF-8
-- when its bytes are, else as MARC-8, and the setting could only spoil a
-- MARC-8 record. Its column (0032) goes; nothing reads it.
-- SQLite drops a column with a CHECK only by rebuilding the table.
CREATE TABLE copycat_targets_new (
    id           INTEGER PRIMARY KEY,
    name         TEXT NOT NULL UNIQUE,
    kind         TEXT NOT NULL CHECK (kind IN ('sru', 'z3950')),
    address      TEXT NOT NULL,
    syntax       TEXT NOT NULL CHECK (syntax IN ('MARC21', 'MARCXML')),
    enabled      INTEGER NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
    timeout_ms   INTEGER NOT NULL CHECK (timeout_ms BETWEEN 1000 AND 30000),
    isbn_index   TEXT NOT NULL DEFAULT '',
    title_index  TEXT NOT NULL DEFAULT '',
    author_index TEXT NOT NULL DEFAULT '',
    created_at   TEXT NOT NULL,
    updated_at   TEXT NOT NULL
);
INSERT INTO copycat_targets_new (id, name, kind, address, syntax, enabled, timeout_ms, isbn_index, title_index, author_index, created_at, updated_at)
    SELECT id, name, kind, address, syntax, enabled, timeout_ms, isbn_index, title_index, author_index, created_at, updated_at FROM copycat_targets;
DROP TABLE copycat_targets;
ALTER TABLE copycat_targets_new RENAME TO copycat_targets;
