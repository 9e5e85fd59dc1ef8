-- Every checkin, with its outcome: the desk's running list of returns (by batch, one
-- per desk session), and the circulation statistics.
CREATE TABLE checkins (
    id              INTEGER PRIMARY KEY,
    batch           TEXT NOT NULL DEFAULT '',
    at              TEXT NOT NULL,
    item_id         INTEGER NOT NULL REFERENCES items(id),
    -- The loan this checkin closed; NULL when the item was not checked out.
    loan_id         INTEGER REFERENCES loans(id),
    branch_id       INTEGER NOT NULL REFERENCES branches(id),
    staff_id        INTEGER REFERENCES staff_users(id),
    actor           TEXT NOT NULL,
    fine_cents      INTEGER NOT NULL DEFAULT 0,
    transfer_to_id  INTEGER REFERENCES branches(id),
    hold_id         INTEGER REFERENCES holds(id),
    hold_in_transit INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX checkins_batch ON checkins (batch, id) WHERE batch <> '';
CREATE INDEX checkins_at ON checkins (at);
