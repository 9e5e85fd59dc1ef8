-- Withdrawing, deleting and merging records and items, and batch item edits.
--
-- A withdrawn item stays in the database for its history (its loans, the fines
-- charged on them, the reports' counts): withdrawn_at says when, withdrawn_reason
-- why (weeded, damaged beyond repair, lost and paid for...). Both are cleared
-- when the item is put back into circulation.
ALTER TABLE items ADD COLUMN withdrawn_at TEXT;
ALTER TABLE items ADD COLUMN withdrawn_reason TEXT NOT NULL DEFAULT '';
-- Items withdrawn before: when they last changed is the best date known.
UPDATE items SET withdrawn_at = updated_at WHERE status = 'withdrawn';

-- A record merged into another: its permanent link (/records/<from_id> on the
-- staff site and the patrons' catalogue) leads to the record kept. The merged
-- record itself is deleted (deleted_records remembers it for OAI-PMH). A record
-- merged into one that is later merged again leads to the last one kept.
CREATE TABLE record_redirects (
    from_id   INTEGER PRIMARY KEY,
    to_id     INTEGER NOT NULL REFERENCES records(id),
    merged_at TEXT NOT NULL
);
CREATE INDEX record_redirects_to ON record_redirects (to_id);

-- A batch edit of items: one change (field, value) applied to many items in one
-- transaction, with each item's values before it, so that it can be undone
-- while it is recent and the items were not changed since.
--   field      home_branch, location, item_type, status, call_number_prefix
--              or withdraw; value the new value (a code, a status, a prefix, the
--              withdrawal reason);
--   undone_at  set once undone; a batch is undone at most once.
CREATE TABLE item_batches (
    id        INTEGER PRIMARY KEY,
    at        TEXT NOT NULL,
    staff_id  INTEGER REFERENCES staff_users(id),
    actor     TEXT NOT NULL,
    field     TEXT NOT NULL,
    value     TEXT NOT NULL DEFAULT '',
    items     INTEGER NOT NULL,
    undone_at TEXT
);
CREATE INDEX item_batches_at ON item_batches (at);

-- Each item of a batch, with the values the batch may change as they were.
CREATE TABLE item_batch_items (
    batch_id          INTEGER NOT NULL REFERENCES item_batches(id),
    item_id           INTEGER NOT NULL REFERENCES items(id),
    home_branch_id    INTEGER NOT NULL,
    current_branch_id INTEGER NOT NULL,
    item_type_id      INTEGER NOT NULL,
    status            TEXT NOT NULL,
    call_number       TEXT NOT NULL,
    location          TEXT NOT NULL,
    withdrawn_at      TEXT,
    withdrawn_reason  TEXT NOT NULL,
    PRIMARY KEY (batch_id, item_id)
);
CREATE INDEX item_batch_items_item ON item_batch_items (item_id);

-- However the status changes (the item form, a check-in, a batch), an item
-- put back into circulation forgets its withdrawal, and an item withdrawn
-- without a reason (the item form) still says when.
CREATE TRIGGER items_withdrawal_cleared AFTER UPDATE OF status ON items
WHEN old.status = 'withdrawn' AND new.status <> 'withdrawn'
BEGIN
    UPDATE items SET withdrawn_at = NULL, withdrawn_reason = '' WHERE id = new.id;
END;

CREATE TRIGGER items_withdrawal_dated AFTER UPDATE OF status ON items
WHEN new.status = 'withdrawn' AND old.status <> 'withdrawn' AND new.withdrawn_at IS NULL
BEGIN
    UPDATE items SET withdrawn_at = new.updated_at WHERE id = new.id;
END;
