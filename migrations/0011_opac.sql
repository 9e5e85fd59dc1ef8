-- The patrons' catalogue (issue 18): its own sessions, and the records deleted
-- from the catalogue, for OAI-PMH harvesters.
--
-- Patrons' sessions are kept apart from staff sessions: a different table, a
-- different cookie (opac/), so that a patron's token can never be looked up as a
-- staff session, and ending every session of a patron never touches the desk's.
-- As for staff, the table keeps the SHA-256 of each token, never the token.
CREATE TABLE opac_sessions (
    token_hash TEXT PRIMARY KEY,
    data       BLOB NOT NULL,
    expiry     TEXT NOT NULL
);
CREATE INDEX opac_sessions_expiry ON opac_sessions (expiry);

-- A record deleted from the catalogue, remembered for ever (OAI-PMH
-- deletedRecord "persistent"): a harvester that comes back after the deletion
-- learns of it with the deletion's time as the datestamp. Stacks has no deletion
-- of records today (only items are withdrawn); the trigger below records any
-- DELETE, from a future feature or from a hand-run statement, so that
-- deletions are tracked whatever deletes the row.
CREATE TABLE deleted_records (
    record_id  INTEGER PRIMARY KEY,
    deleted_at TEXT NOT NULL
);

CREATE TRIGGER records_deleted AFTER DELETE ON records
BEGIN
    INSERT INTO deleted_records (record_id, deleted_at)
    VALUES (old.id, strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
    ON CONFLICT (record_id) DO UPDATE SET deleted_at = excluded.deleted_at;
END;

-- A deleted record's id is never given to another: harvesters and bookmarks
-- know the record by it (oai:<repository>:<id>, /records/<id>), and a new book
-- under an old id would be named by the old book's identifier. records.id is an
-- INTEGER PRIMARY KEY without AUTOINCREMENT, so SQLite would reuse the largest
-- id once its row is deleted: Stacks' inserts choose the id above both the
-- largest live and the largest deleted one (catalog.nextRecordID), and any other
-- insert that reuses a deleted id is refused.
CREATE TRIGGER records_deleted_id_reserved BEFORE INSERT ON records
WHEN EXISTS (SELECT 1 FROM deleted_records WHERE record_id = new.id)
BEGIN
    SELECT RAISE(ABORT, 'the id of a deleted record is not given to another record');
END;

-- OAI-PMH selects by datestamp (from, until): records by when they last changed.
CREATE INDEX records_updated ON records (updated_at, id);

-- A record's datestamp for harvesters covers its copies: marc21 embeds them (an
-- 852 field a copy), so a copy added, moved, relabelled or withdrawn changes
-- the record as harvested, and an incremental harvest (from) must see it. A
-- change of availability alone (a loan, a return) does not: it would redate
-- the catalogue all day; harvesters refresh availability otherwise.
CREATE TRIGGER items_inserted_redate AFTER INSERT ON items
BEGIN
    UPDATE records SET updated_at = max(updated_at, new.updated_at) WHERE id = new.record_id;
END;

CREATE TRIGGER items_updated_redate AFTER UPDATE OF record_id, barcode, home_branch_id, call_number, status ON items
WHEN old.record_id IS NOT new.record_id OR old.barcode IS NOT new.barcode
    OR old.home_branch_id IS NOT new.home_branch_id OR old.call_number IS NOT new.call_number
    OR (old.status = 'withdrawn') <> (new.status = 'withdrawn')
BEGIN
    UPDATE records SET updated_at = max(updated_at, new.updated_at) WHERE id IN (old.record_id, new.record_id);
END;

CREATE TRIGGER items_deleted_redate AFTER DELETE ON items
BEGIN
    UPDATE records SET updated_at = max(updated_at, strftime('%Y-%m-%dT%H:%M:%SZ', 'now')) WHERE id = old.record_id;
END;

-- Each change of a patron's PIN (at the desk or in My account) advances the
-- generation; a patrons'-site session keeps the generation it signed in under
-- and ends when they differ. Deleting the patron's sessions at the change is not
-- enough: a request in flight from another device would write its session back.
ALTER TABLE patrons ADD COLUMN pin_generation INTEGER NOT NULL DEFAULT 0;
