-- Every saved version of a record's MARC, so that an edit can be looked at
-- and undone (a restore is a new save of an old version).
--   version   1, 2, ... within the record; a record's first save through the
--             editor or the quick form also keeps, as version 1, the MARC it
--             had before (imported, or made from its fields)
--   marc      the record's MARCXML as saved
--   staff_id  who saved it (NULL for version 1 of a record saved before
--             versions were kept, and for imports); actor is the name
--   saved_at  when
-- No foreign key to records: a deleted or merged record's history stays.
CREATE TABLE record_versions (
    record_id INTEGER NOT NULL,
    version   INTEGER NOT NULL,
    marc      TEXT NOT NULL,
    staff_id  INTEGER REFERENCES staff_users (id),
    actor     TEXT NOT NULL DEFAULT '',
    saved_at  TEXT NOT NULL,
    PRIMARY KEY (record_id, version)
);
