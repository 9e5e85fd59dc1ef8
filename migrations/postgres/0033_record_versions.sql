-- Every saved version of a record's MARC: see SQLite's 0033_record_versions.sql.
CREATE TABLE record_versions (
    record_id bigint NOT NULL,
    version   integer NOT NULL,
    marc      text NOT NULL,
    staff_id  bigint REFERENCES staff_users (id),
    actor     text NOT NULL DEFAULT '',
    saved_at  text NOT NULL,
    PRIMARY KEY (record_id, version)
);
