-- Reports, stocktake, labels and circulation history (issue 19).

-- The lost, missing and withdrawn items, for "not borrowed since". A partial
-- index: a checkout or checkin (available and on loan) is never in it, so the
-- desk writes nothing here (the same as items_in_transit, migration 0005).
CREATE INDEX items_gone ON items (home_branch_id, item_type_id, status) WHERE status IN ('lost', 'missing', 'withdrawn');

-- Circulation statistics, rolled up from loans OFF the desk's write path: no
-- trigger, no index and no statement is added to a checkout or a checkin
-- (issue 19 first had triggers here; they made a checkout 0.45 ms slower). The
-- rollup (reports.Rollup) runs every minute in stacks serve and before each
-- report that reads these tables, and adds the loans with an id above
-- report_rollup.last_loan_id. Loans are append-only for what is counted: the
-- issue time, branch, item and patron of a loan never change after the insert
-- (a renewal changes due_at and renewals, a return returned_at and
-- return_branch_id), so a loan rolled up once never needs counting again.
CREATE TABLE report_rollup (
    id           INTEGER PRIMARY KEY CHECK (id = 1),
    -- Every loan with an id up to this one is counted in the tables below.
    last_loan_id INTEGER NOT NULL,
    rolled_at    TEXT NOT NULL,
    -- When collection_stats was last counted ('' for never).
    collection_at TEXT NOT NULL DEFAULT ''
);
INSERT INTO report_rollup (id, last_loan_id, rolled_at)
VALUES (1, coalesce((SELECT max(id) FROM loans), 0), strftime('%Y-%m-%dT%H:%M:%SZ', 'now'));

-- The collection by home branch and item type, counted from items every minute by
-- the same background job (reports.RefreshCollection): how many items (withdrawn
-- left out), on loan, and lost or missing. Counting it live needs either an index
-- with the status in it, which every checkout and checkin would write, or a read
-- of every item (0.4 s at 100,000 titles).
CREATE TABLE collection_stats (
    branch_id    INTEGER NOT NULL,
    item_type_id INTEGER NOT NULL,
    items        INTEGER NOT NULL,
    on_loan      INTEGER NOT NULL,
    gone         INTEGER NOT NULL,
    PRIMARY KEY (branch_id, item_type_id)
) WITHOUT ROWID;

-- Loans issued per day, branch, item type and patron category: the circulation
-- reports add up a few thousand rows instead of joining every loan of a year to
-- its item and patron. The item type and the category are those when the loan
-- was rolled up (within a minute of the loan), and the counts stay when loans are
-- later anonymised or deleted (issue 16). WITHOUT ROWID with integer keys (day as
-- YYYYMMDD, instants as Unix seconds).
CREATE TABLE loan_stats (
    day          INTEGER NOT NULL,
    branch_id    INTEGER NOT NULL,
    item_type_id INTEGER NOT NULL,
    category_id  INTEGER NOT NULL,
    loans        INTEGER NOT NULL,
    PRIMARY KEY (day, branch_id, item_type_id, category_id)
) WITHOUT ROWID;
INSERT INTO loan_stats (day, branch_id, item_type_id, category_id, loans)
-- (Before migration 0013 every loan has its patron; reports.LoanCategory is the
-- expression the rollup uses from then on.)
SELECT CAST(replace(substr(l.issued_at, 1, 10), '-', '') AS INTEGER), l.branch_id, i.item_type_id, coalesce(p.category_id, 0), count(*)
FROM loans l JOIN items i ON i.id = l.item_id LEFT JOIN patrons p ON p.id = l.patron_id
GROUP BY 1, 2, 3, 4;

-- Each loan's title, by the time it was issued: "most borrowed titles" over a
-- period reads this narrow table in time order instead of looking up every
-- loan's item. Rolled up with loan_stats; it stays when loans are anonymised.
CREATE TABLE loan_titles (
    issued       INTEGER NOT NULL,
    loan_id      INTEGER NOT NULL,
    record_id    INTEGER NOT NULL,
    branch_id    INTEGER NOT NULL,
    item_type_id INTEGER NOT NULL,
    PRIMARY KEY (issued, loan_id)
) WITHOUT ROWID;
INSERT INTO loan_titles (issued, loan_id, record_id, branch_id, item_type_id)
SELECT CAST(strftime('%s', l.issued_at) AS INTEGER), l.id, i.record_id, l.branch_id, i.item_type_id
FROM loans l JOIN items i ON i.id = l.item_id;

-- The same in title order: "most borrowed" over a long period counts each
-- title's loans as it goes, instead of sorting every loan of the period by title.
CREATE INDEX loan_titles_record ON loan_titles (record_id, issued, branch_id, item_type_id);

-- Each item's loans, rolled up: an item's history page finds them here (and the
-- few loans not yet rolled up by reading the newest loans), instead of through
-- an index on loans (item_id) that every checkout would write.
CREATE TABLE item_loans (
    item_id INTEGER NOT NULL,
    loan_id INTEGER NOT NULL,
    PRIMARY KEY (item_id, loan_id)
) WITHOUT ROWID;
INSERT INTO item_loans (item_id, loan_id) SELECT item_id, id FROM loans;

-- The loans not known to be returned, by due date, as of the last rollup: the
-- overdue report reads the ones due before now from here (a few thousand) and
-- checks each against loans, instead of reading every current loan (an index on
-- loans by due date would be written by every checkout and checkin). The rollup
-- adds the new loans; reports.PruneOpenLoans (every minute in stacks serve)
-- removes the returned ones and takes renewed due dates. A renewal only moves a
-- due date later, so a loan due before now is due before now here too.
CREATE TABLE open_loans (
    loan_id INTEGER PRIMARY KEY,
    due_at  TEXT NOT NULL
);
INSERT INTO open_loans (loan_id, due_at) SELECT id, due_at FROM loans WHERE returned_at IS NULL;
CREATE INDEX open_loans_due ON open_loans (due_at);
ALTER TABLE report_rollup ADD COLUMN open_loans_at TEXT NOT NULL DEFAULT '';

-- New patrons by day.
CREATE INDEX patrons_created ON patrons (created_at);

-- SQL reports administrators save and run on a read-only connection with a time
-- limit and a row cap. Parameters are named in the SQL (:from, :branch).
CREATE TABLE saved_reports (
    id          INTEGER PRIMARY KEY,
    name        TEXT NOT NULL UNIQUE,
    description TEXT NOT NULL DEFAULT '',
    sql         TEXT NOT NULL,
    staff_id    INTEGER REFERENCES staff_users(id),
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);

-- When a stocktake last saw the item on the shelf.
ALTER TABLE items ADD COLUMN last_seen_at TEXT;

-- When the item was last borrowed, as of the last rollup (not written at the
-- desk): "items not borrowed since" reads it through its index. The index has no
-- status in it, so a checkout's change of status does not write it.
ALTER TABLE items ADD COLUMN last_borrowed_at TEXT;
UPDATE items SET last_borrowed_at = (SELECT max(l.issued_at) FROM loans l WHERE l.item_id = items.id);
CREATE INDEX items_last_borrowed ON items (last_borrowed_at, home_branch_id, item_type_id);

-- A stocktake of one shelf range at a branch: the call numbers from and to
-- (inclusive, compared as text), and every scan in it.
CREATE TABLE stocktakes (
    id          INTEGER PRIMARY KEY,
    branch_id   INTEGER NOT NULL REFERENCES branches(id),
    call_from   TEXT NOT NULL,
    call_to     TEXT NOT NULL,
    staff_id    INTEGER REFERENCES staff_users(id),
    started_at  TEXT NOT NULL
);
CREATE TABLE stocktake_scans (
    id           INTEGER PRIMARY KEY,
    stocktake_id INTEGER NOT NULL REFERENCES stocktakes(id),
    -- NULL for a barcode that matches no item.
    item_id      INTEGER REFERENCES items(id),
    barcode      TEXT NOT NULL,
    at           TEXT NOT NULL
);
CREATE INDEX stocktake_scans_stocktake ON stocktake_scans (stocktake_id, item_id);
-- A branch's shelf range, in call number order.
CREATE INDEX items_shelf ON items (home_branch_id, call_number);
