-- SIP2 (issue 7): the accounts self-check machines and sorters log in with, and the
-- patrons' PINs they check.
--
-- A SIP account belongs to one institution (the AO field of every message) and works
-- at one branch: its checkouts and checkins happen there, as a staff account's do.
CREATE TABLE sip_accounts (
    id            INTEGER PRIMARY KEY,
    username      TEXT NOT NULL UNIQUE,
    password_hash TEXT NOT NULL,
    institution   TEXT NOT NULL,
    branch_id     INTEGER NOT NULL REFERENCES branches(id),
    active        INTEGER NOT NULL DEFAULT 1,
    created_at    TEXT NOT NULL
);

-- The bcrypt hash of the PIN a patron types at a self-check machine; '' when none
-- is set (then no PIN matches).
ALTER TABLE patrons ADD COLUMN pin_hash TEXT NOT NULL DEFAULT '';
