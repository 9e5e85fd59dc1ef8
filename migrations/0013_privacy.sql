-- stacks:foreign-keys-off
-- Privacy (issue 16): loan history anonymised after a number of days, inactive
-- patrons purged, a patron's data exported on request (docs/privacy.md).
--
-- The line above makes db.Migrate run this file with foreign keys off (SQLite
-- ignores the pragma inside a transaction, so Migrate sets it before BEGIN): the
-- loans table is rebuilt, and dropping the old one would otherwise orphan the
-- ledger's and the checkins' references to it for a moment. Migrate runs
-- PRAGMA foreign_key_check before it commits, so the rebuild cannot leave a
-- broken reference behind.
--
-- loans is rebuilt because SQLite cannot drop a NOT NULL: an anonymised loan has
-- no patron (patron_id NULL), and keeps, for the statistics by patron category
-- and branch, a snapshot of the category and home branch its patron had
-- (patron_category_id, patron_branch_id; filled when it is anonymised). Every
-- other column, every row (with its id), and every index stay as they were.
CREATE TABLE loans_new (
    id                 INTEGER PRIMARY KEY,
    item_id            INTEGER NOT NULL REFERENCES items(id),
    -- NULL once the loan is anonymised (a returned loan only: circulation.Check).
    patron_id          INTEGER REFERENCES patrons(id),
    branch_id          INTEGER NOT NULL REFERENCES branches(id),
    staff_id           INTEGER REFERENCES staff_users(id),
    issued_at          TEXT NOT NULL,
    due_at             TEXT NOT NULL,
    renewals           INTEGER NOT NULL DEFAULT 0,
    returned_at        TEXT,
    return_branch_id   INTEGER REFERENCES branches(id),
    -- The patron's category and home branch when the loan was anonymised.
    patron_category_id INTEGER REFERENCES patron_categories(id),
    patron_branch_id   INTEGER REFERENCES branches(id)
);
INSERT INTO loans_new (id, item_id, patron_id, branch_id, staff_id, issued_at, due_at, renewals, returned_at, return_branch_id)
    SELECT id, item_id, patron_id, branch_id, staff_id, issued_at, due_at, renewals, returned_at, return_branch_id FROM loans;
DROP TABLE loans;
ALTER TABLE loans_new RENAME TO loans;
-- At most one current loan per item: the database itself refuses a double checkout.
CREATE UNIQUE INDEX loans_current_item ON loans (item_id) WHERE returned_at IS NULL;
CREATE INDEX loans_current_patron ON loans (patron_id) WHERE returned_at IS NULL;
CREATE INDEX loans_patron_history ON loans (patron_id, returned_at);
-- The anonymisation run's search: returned loans that still name a patron, oldest
-- return first.
CREATE INDEX loans_returned_named ON loans (returned_at) WHERE patron_id IS NOT NULL AND returned_at IS NOT NULL;

-- A patron who opts in keeps their loan history: anonymisation passes over them.
ALTER TABLE patrons ADD COLUMN keep_history INTEGER NOT NULL DEFAULT 0;

-- Both default to 0, never, as Koha's do: anonymising and purging cannot be
-- undone, and a library that upgrades must not lose its history before it has
-- chosen its policy. The preferences page says what each does and suggests
-- values (docs/privacy.md).
INSERT INTO preferences (name, value) VALUES
    ('anonymise_loans_after_days', '0'),
    ('purge_inactive_after_years', '0')
    ON CONFLICT (name) DO NOTHING;

-- The latest return among the patron's anonymised loans: their activity, for the
-- purge of inactive patrons, once the loans no longer name them. NULL: none.
ALTER TABLE patrons ADD COLUMN anonymised_until TEXT;

-- The audit entries about one thing (a patron: their activity for the purge,
-- their export, the scrub when they are purged), found without reading the log.
CREATE INDEX audit_log_object ON audit_log (object_type, object_id, at);
