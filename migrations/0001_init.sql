-- The library's base schema.
--
-- Conventions, kept portable to PostgreSQL where that is free:
--   * instants are TEXT in UTC, fixed format 'YYYY-MM-DDTHH:MM:SSZ' (they sort as text);
--   * calendar days are TEXT 'YYYY-MM-DD';
--   * money is INTEGER cents;
--   * a NULL foreign key in a rule means "any" (a wildcard).

CREATE TABLE branches (
    id              INTEGER PRIMARY KEY,
    code            TEXT NOT NULL UNIQUE,
    name            TEXT NOT NULL,
    address         TEXT NOT NULL DEFAULT '',
    -- Weekdays the branch is always closed, as digits 0 (Sunday) to 6 (Saturday).
    closed_weekdays TEXT NOT NULL DEFAULT '0',
    -- Local closing time: day loans fall due at closing.
    closes_at       TEXT NOT NULL DEFAULT '20:00'
);

-- Single closed days (holidays). A NULL branch closes every branch.
CREATE TABLE closed_days (
    id          INTEGER PRIMARY KEY,
    branch_id   INTEGER REFERENCES branches(id),
    day         TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT ''
);
CREATE UNIQUE INDEX closed_days_branch_day ON closed_days (coalesce(branch_id, 0), day);

CREATE TABLE staff_users (
    id            INTEGER PRIMARY KEY,
    username      TEXT NOT NULL UNIQUE,
    display_name  TEXT NOT NULL,
    password_hash TEXT NOT NULL,
    role          TEXT NOT NULL CHECK (role IN ('circulation', 'admin')),
    branch_id     INTEGER NOT NULL REFERENCES branches(id),
    active        INTEGER NOT NULL DEFAULT 1,
    created_at    TEXT NOT NULL
);

-- Failed logins, per account ("user:NAME") and per address ("addr:IP"). Kept in the
-- database, not in memory, so that CGI processes share it.
CREATE TABLE login_throttle (
    key          TEXT PRIMARY KEY,
    failures     INTEGER NOT NULL,
    first_at     TEXT NOT NULL,
    locked_until TEXT
);

CREATE TABLE patron_categories (
    id           INTEGER PRIMARY KEY,
    code         TEXT NOT NULL UNIQUE,
    name         TEXT NOT NULL,
    -- How long a new or renewed card is valid.
    card_months  INTEGER NOT NULL DEFAULT 12,
    max_holds    INTEGER NOT NULL DEFAULT 10
);

CREATE TABLE patrons (
    id             INTEGER PRIMARY KEY,
    card           TEXT NOT NULL UNIQUE,
    surname        TEXT NOT NULL,
    first_name     TEXT NOT NULL DEFAULT '',
    email          TEXT NOT NULL DEFAULT '',
    phone          TEXT NOT NULL DEFAULT '',
    address        TEXT NOT NULL DEFAULT '',
    category_id    INTEGER NOT NULL REFERENCES patron_categories(id),
    home_branch_id INTEGER NOT NULL REFERENCES branches(id),
    expires_on     TEXT NOT NULL,
    blocked        INTEGER NOT NULL DEFAULT 0,
    block_note     TEXT NOT NULL DEFAULT '',
    notes          TEXT NOT NULL DEFAULT '',
    created_at     TEXT NOT NULL
);
CREATE INDEX patrons_name ON patrons (surname, first_name);

CREATE TABLE item_types (
    id           INTEGER PRIMARY KEY,
    code         TEXT NOT NULL UNIQUE,
    name         TEXT NOT NULL,
    not_for_loan INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE records (
    id             INTEGER PRIMARY KEY,
    title          TEXT NOT NULL,
    author         TEXT NOT NULL DEFAULT '',
    isbn           TEXT NOT NULL DEFAULT '',
    publisher      TEXT NOT NULL DEFAULT '',
    year           INTEGER,
    -- Subject headings, one per line.
    subjects       TEXT NOT NULL DEFAULT '',
    -- The 001 control number of the source record, if any.
    control_number TEXT NOT NULL DEFAULT '',
    -- The source MARC21 record as MARCXML, kept whole.
    marc           TEXT NOT NULL DEFAULT '',
    created_at     TEXT NOT NULL,
    updated_at     TEXT NOT NULL
);
CREATE INDEX records_isbn ON records (isbn) WHERE isbn <> '';
CREATE INDEX records_control_number ON records (control_number) WHERE control_number <> '';

CREATE TABLE items (
    id                INTEGER PRIMARY KEY,
    barcode           TEXT NOT NULL UNIQUE,
    record_id         INTEGER NOT NULL REFERENCES records(id),
    home_branch_id    INTEGER NOT NULL REFERENCES branches(id),
    current_branch_id INTEGER NOT NULL REFERENCES branches(id),
    item_type_id      INTEGER NOT NULL REFERENCES item_types(id),
    call_number       TEXT NOT NULL DEFAULT '',
    status            TEXT NOT NULL DEFAULT 'available'
        CHECK (status IN ('available', 'on_loan', 'in_transit', 'on_hold_shelf', 'lost', 'withdrawn', 'missing')),
    -- Where an item in transit is going.
    transit_to_id     INTEGER REFERENCES branches(id),
    price_cents       INTEGER NOT NULL DEFAULT 0,
    created_at        TEXT NOT NULL,
    updated_at        TEXT NOT NULL
);
CREATE INDEX items_record ON items (record_id);

-- Circulation rules: the most specific match of (patron category, item type, branch)
-- wins; NULL matches anything.
CREATE TABLE circ_rules (
    id                 INTEGER PRIMARY KEY,
    patron_category_id INTEGER REFERENCES patron_categories(id),
    item_type_id       INTEGER REFERENCES item_types(id),
    branch_id          INTEGER REFERENCES branches(id),
    loan_period        INTEGER NOT NULL,
    loan_unit          TEXT NOT NULL DEFAULT 'days' CHECK (loan_unit IN ('days', 'hours')),
    max_loans          INTEGER NOT NULL,
    renewals           INTEGER NOT NULL,
    fine_cents         INTEGER NOT NULL DEFAULT 0,
    grace_periods      INTEGER NOT NULL DEFAULT 0,
    fine_cap_cents     INTEGER NOT NULL DEFAULT 0,
    hold_pickup_days   INTEGER NOT NULL DEFAULT 7
);
CREATE UNIQUE INDEX circ_rules_scope ON circ_rules (
    coalesce(patron_category_id, 0), coalesce(item_type_id, 0), coalesce(branch_id, 0));

-- Loans: a current loan has returned_at NULL; a returned one is the history.
CREATE TABLE loans (
    id               INTEGER PRIMARY KEY,
    item_id          INTEGER NOT NULL REFERENCES items(id),
    patron_id        INTEGER NOT NULL REFERENCES patrons(id),
    branch_id        INTEGER NOT NULL REFERENCES branches(id),
    staff_id         INTEGER REFERENCES staff_users(id),
    issued_at        TEXT NOT NULL,
    due_at           TEXT NOT NULL,
    renewals         INTEGER NOT NULL DEFAULT 0,
    returned_at      TEXT,
    return_branch_id INTEGER REFERENCES branches(id)
);
-- At most one current loan per item: the database itself refuses a double checkout.
CREATE UNIQUE INDEX loans_current_item ON loans (item_id) WHERE returned_at IS NULL;
CREATE INDEX loans_current_patron ON loans (patron_id) WHERE returned_at IS NULL;
CREATE INDEX loans_patron_history ON loans (patron_id, returned_at);

CREATE TABLE holds (
    id               INTEGER PRIMARY KEY,
    record_id        INTEGER NOT NULL REFERENCES records(id),
    -- Set for an item-level hold.
    item_id          INTEGER REFERENCES items(id),
    patron_id        INTEGER NOT NULL REFERENCES patrons(id),
    pickup_branch_id INTEGER NOT NULL REFERENCES branches(id),
    placed_at        TEXT NOT NULL,
    -- Position in the record's queue, 1 first, among queued holds; 0 once trapped
    -- (waiting on the shelf or in transit to the pickup branch), as in Koha.
    priority         INTEGER NOT NULL,
    status           TEXT NOT NULL DEFAULT 'queued'
        CHECK (status IN ('queued', 'in_transit', 'waiting', 'fulfilled', 'cancelled', 'expired')),
    suspended_until  TEXT,
    -- The copy set aside for the patron, once trapped.
    trapped_item_id  INTEGER REFERENCES items(id),
    waiting_since    TEXT,
    pickup_by        TEXT,
    closed_at        TEXT,
    cancel_reason    TEXT NOT NULL DEFAULT '',
    staff_id         INTEGER REFERENCES staff_users(id)
);
CREATE INDEX holds_open_record ON holds (record_id, priority) WHERE status IN ('queued', 'in_transit', 'waiting');
CREATE INDEX holds_patron ON holds (patron_id, status);
CREATE UNIQUE INDEX holds_trapped_item ON holds (trapped_item_id) WHERE status IN ('in_transit', 'waiting');

-- The fines and payments ledger: charges are positive, payments and waivers negative;
-- a patron's balance is the sum.
CREATE TABLE ledger (
    id           INTEGER PRIMARY KEY,
    patron_id    INTEGER NOT NULL REFERENCES patrons(id),
    kind         TEXT NOT NULL CHECK (kind IN ('overdue', 'lost', 'fee', 'payment', 'waiver')),
    amount_cents INTEGER NOT NULL,
    loan_id      INTEGER REFERENCES loans(id),
    description  TEXT NOT NULL DEFAULT '',
    staff_id     INTEGER REFERENCES staff_users(id),
    created_at   TEXT NOT NULL
);
CREATE INDEX ledger_patron ON ledger (patron_id);

CREATE TABLE preferences (
    name  TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

-- Staff sessions (alexedwards/scs): shared by every process, so CGI works.
CREATE TABLE sessions (
    token  TEXT PRIMARY KEY,
    data   BLOB NOT NULL,
    expiry TEXT NOT NULL
);
CREATE INDEX sessions_expiry ON sessions (expiry);

-- Who did what: overrides, hold changes, account changes.
CREATE TABLE audit_log (
    id          INTEGER PRIMARY KEY,
    at          TEXT NOT NULL,
    staff_id    INTEGER REFERENCES staff_users(id),
    actor       TEXT NOT NULL,
    action      TEXT NOT NULL,
    object_type TEXT NOT NULL DEFAULT '',
    object_id   INTEGER,
    detail      TEXT NOT NULL DEFAULT ''
);
CREATE INDEX audit_log_at ON audit_log (at);

INSERT INTO preferences (name, value) VALUES
    ('library_name', 'Stacks Library'),
    ('fines_limit_cents', '500'),
    ('timezone', 'UTC');
