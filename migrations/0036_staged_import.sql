-- Staged MARC import: a file is read into a batch, each record matched against
-- the catalogue, reviewed, then committed in one transaction, and undone while
-- none of its copies has circulated.
--
-- import_batches, one per uploaded file:
--   state          staged, committed or undone
--   branch, item_type, generate_items  the defaults for copies, as chosen at upload
--   action_001, action_035, action_isbn  what the commit does with the records
--                  each rule matched: overlay, new (add as a new record) or skip
--   staged_records, matched, errors  counts, for the list of batches
--   created, overlaid, skipped, copies  what the commit did
CREATE TABLE import_batches (
    id             INTEGER PRIMARY KEY,
    file_name      TEXT NOT NULL DEFAULT '',
    state          TEXT NOT NULL DEFAULT 'staged' CHECK (state IN ('staged', 'committed', 'undone')),
    staff_id       INTEGER REFERENCES staff_users(id),
    actor          TEXT NOT NULL DEFAULT '',
    branch         TEXT NOT NULL,
    item_type      TEXT NOT NULL,
    generate_items INTEGER NOT NULL DEFAULT 0,
    action_001     TEXT NOT NULL DEFAULT 'overlay',
    action_035     TEXT NOT NULL DEFAULT 'overlay',
    action_isbn    TEXT NOT NULL DEFAULT 'overlay',
    staged_records INTEGER NOT NULL DEFAULT 0,
    matched        INTEGER NOT NULL DEFAULT 0,
    errors         INTEGER NOT NULL DEFAULT 0,
    created        INTEGER NOT NULL DEFAULT 0,
    overlaid       INTEGER NOT NULL DEFAULT 0,
    skipped        INTEGER NOT NULL DEFAULT 0,
    copies         INTEGER NOT NULL DEFAULT 0,
    staged_at      TEXT NOT NULL,
    committed_at   TEXT,
    undone_at      TEXT
);

-- Each record of a batch, by its 0-based position in the file:
--   marc        the record as MARCXML ('' when it could not be read)
--   title       its title, for the lists
--   match_rule  '' (new), '001', '035' or 'isbn': the first rule that matched
--   match_id    the record it matched (no foreign key: it may be deleted before the commit)
--   match_key   the value that matched (the control number, the 035 number, the ISBN)
--   error       why it cannot be imported ('' when it can)
--   outcome     after the commit: created, overlaid or skipped
--   record_id   the record it created or overlaid
--   prev_marc   an overlaid record's MARC before the commit, restored by an undo
CREATE TABLE import_batch_records (
    batch_id   INTEGER NOT NULL REFERENCES import_batches(id),
    position   INTEGER NOT NULL,
    marc       TEXT NOT NULL DEFAULT '',
    title      TEXT NOT NULL DEFAULT '',
    match_rule TEXT NOT NULL DEFAULT '',
    match_id   INTEGER,
    match_key  TEXT NOT NULL DEFAULT '',
    error      TEXT NOT NULL DEFAULT '',
    outcome    TEXT NOT NULL DEFAULT '',
    record_id  INTEGER,
    prev_marc  TEXT,
    PRIMARY KEY (batch_id, position)
);
CREATE INDEX import_batch_records_rule ON import_batch_records (batch_id, match_rule, position);

-- The copies a committed batch added, deleted again by its undo.
CREATE TABLE import_batch_items (
    batch_id INTEGER NOT NULL REFERENCES import_batches(id),
    item_id  INTEGER NOT NULL,
    PRIMARY KEY (batch_id, item_id)
);
CREATE INDEX import_batch_items_item ON import_batch_items (item_id);
