-- Reports, stocktake, labels and circulation history (issue 19).

-- An item's loans, newest first, without reading every loan: the item's history
-- page, "items not borrowed since" and "most borrowed titles".
CREATE INDEX loans_item ON loans (item_id, issued_at);
-- The fines a loan was charged, for the history pages.
CREATE INDEX ledger_loan ON ledger (loan_id) WHERE loan_id IS NOT NULL;
-- The current loans past due, without reading every loan: the overdue report.
CREATE INDEX loans_current_due ON loans (due_at) WHERE returned_at IS NULL;
-- The collection by branch, type and status, read from the index alone.
CREATE INDEX items_collection ON items (home_branch_id, item_type_id, status);

-- Circulation statistics: loans issued per day, branch, item type and patron
-- category, kept by a trigger as each loan is written (by the desk, SIP, the
-- demo), so that the circulation reports add up a few thousand rows instead of
-- joining every loan of a year to its item and patron. The item type and the
-- category are those at the time of the loan, as statistics should be; the
-- counts stay when loans are later anonymised or deleted (issue 16).
--
-- Both tables are WITHOUT ROWID with integer keys (day as YYYYMMDD, instants
-- as Unix seconds): one b-tree each, the least a checkout pays for them.
CREATE TABLE loan_stats (
    day          INTEGER NOT NULL,
    branch_id    INTEGER NOT NULL,
    item_type_id INTEGER NOT NULL,
    category_id  INTEGER NOT NULL,
    loans        INTEGER NOT NULL,
    PRIMARY KEY (day, branch_id, item_type_id, category_id)
) WITHOUT ROWID;

INSERT INTO loan_stats (day, branch_id, item_type_id, category_id, loans)
SELECT CAST(replace(substr(l.issued_at, 1, 10), '-', '') AS INTEGER), l.branch_id, i.item_type_id, p.category_id, count(*)
FROM loans l JOIN items i ON i.id = l.item_id JOIN patrons p ON p.id = l.patron_id
GROUP BY 1, 2, 3, 4;

-- Each loan's title, by the time it was issued: "most borrowed titles" over a
-- period reads this narrow table in time order instead of looking up every
-- loan's item (a random read each, slow once a year's loans outgrow the page
-- cache). Kept by the same trigger; it stays when loans are anonymised or
-- deleted (issue 16).
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

CREATE TRIGGER loans_count AFTER INSERT ON loans BEGIN
    INSERT INTO loan_titles (issued, loan_id, record_id, branch_id, item_type_id)
    SELECT CAST(strftime('%s', NEW.issued_at) AS INTEGER), NEW.id, i.record_id, NEW.branch_id, i.item_type_id
    FROM items i WHERE i.id = NEW.item_id;
    INSERT INTO loan_stats (day, branch_id, item_type_id, category_id, loans)
    SELECT CAST(replace(substr(NEW.issued_at, 1, 10), '-', '') AS INTEGER), NEW.branch_id, i.item_type_id, p.category_id, 1
    FROM items i, patrons p WHERE i.id = NEW.item_id AND p.id = NEW.patron_id
    ON CONFLICT (day, branch_id, item_type_id, category_id) DO UPDATE SET loans = loans + 1;
END;
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

-- When the item was last borrowed, kept by a trigger as loans are written: "items
-- not borrowed since" reads an index instead of looking for each item's loans.
ALTER TABLE items ADD COLUMN last_borrowed_at TEXT;
UPDATE items SET last_borrowed_at = (SELECT max(l.issued_at) FROM loans l WHERE l.item_id = items.id);
CREATE INDEX items_last_borrowed ON items (last_borrowed_at, status, home_branch_id, item_type_id);
CREATE TRIGGER loans_last_borrowed AFTER INSERT ON loans BEGIN
    UPDATE items SET last_borrowed_at = NEW.issued_at
    WHERE id = NEW.item_id AND (last_borrowed_at IS NULL OR last_borrowed_at < NEW.issued_at);
END;

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
