-- Notices (issue 15): patrons are told, by email and on paper.
--
-- notice_items are the occurrences of a trigger (this hold is waiting, this loan is
-- a first time overdue): one row each, never two, thanks to notice_items_once, so a
-- run repeated after a restart queues nothing twice. The key holds the occurrence
-- (the loan's due date, the hold's trap): a renewed loan or a hold trapped again is
-- a new occurrence with notices of its own. The daily run groups a patron's
-- new items into one notice_messages row per delivery (the digest), rendered from
-- the templates when it is queued; the message row is the queue the sender works
-- through (pending, sent, failed) with its attempts and backoff.

-- What a patron wants for each kind of notice; no row means the default (email when
-- the patron has an address, else print).
CREATE TABLE notice_preferences (
    patron_id INTEGER NOT NULL REFERENCES patrons(id),
    kind      TEXT NOT NULL,
    delivery  TEXT NOT NULL CHECK (delivery IN ('email', 'print', 'none')),
    PRIMARY KEY (patron_id, kind)
);

-- Templates an administrator changed; a kind without a row uses the built-in one.
CREATE TABLE notice_templates (
    kind       TEXT PRIMARY KEY,
    subject    TEXT NOT NULL,
    body_text  TEXT NOT NULL,
    body_html  TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    staff_id   INTEGER REFERENCES staff_users(id)
);

-- When loan notices go out, by patron category and item type (NULL is any; the
-- most specific rule wins, as with circ_rules). Days are open days of the branch
-- the loan was issued at; 0 turns that notice off.
CREATE TABLE notice_rules (
    id                 INTEGER PRIMARY KEY,
    patron_category_id INTEGER REFERENCES patron_categories(id),
    item_type_id       INTEGER REFERENCES item_types(id),
    predue_days        INTEGER NOT NULL DEFAULT 2,
    overdue1_days      INTEGER NOT NULL DEFAULT 1,
    overdue2_days      INTEGER NOT NULL DEFAULT 7,
    overdue3_days      INTEGER NOT NULL DEFAULT 14
);
CREATE UNIQUE INDEX notice_rules_scope ON notice_rules (
    coalesce(patron_category_id, 0), coalesce(item_type_id, 0));
INSERT INTO notice_rules (patron_category_id, item_type_id, predue_days, overdue1_days, overdue2_days, overdue3_days)
    VALUES (NULL, NULL, 2, 1, 7, 14);

-- The queue: one message to one patron by one delivery, rendered when queued.
CREATE TABLE notice_messages (
    id              INTEGER PRIMARY KEY,
    patron_id       INTEGER NOT NULL REFERENCES patrons(id),
    delivery        TEXT NOT NULL CHECK (delivery IN ('email', 'print')),
    -- The branch whose print batch holds a printed notice (the patron's home branch).
    branch_id       INTEGER NOT NULL REFERENCES branches(id),
    library_day     TEXT NOT NULL,
    to_address      TEXT NOT NULL DEFAULT '',
    subject         TEXT NOT NULL,
    body_text       TEXT NOT NULL,
    body_html       TEXT NOT NULL,
    -- cancelled: no longer needed when its turn came (the loan was returned, the
    -- hold collected); last_error says why.
    status          TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sent', 'failed', 'cancelled')),
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at TEXT NOT NULL,
    -- Set by the sender just before it hands the message to the relay: no other
    -- process sends it before this instant (well past the SMTP timeout).
    claimed_until   TEXT,
    last_error      TEXT NOT NULL DEFAULT '',
    created_at      TEXT NOT NULL,
    sent_at         TEXT,
    -- When staff last resent it: a message queued too long ago is cancelled
    -- unsent, counting from here after a resend.
    resent_at       TEXT
);
CREATE INDEX notice_messages_due ON notice_messages (status, next_attempt_at);
CREATE INDEX notice_messages_patron ON notice_messages (patron_id, id);
CREATE INDEX notice_messages_print ON notice_messages (branch_id, id) WHERE delivery = 'print' AND status = 'pending';

-- One occurrence of a trigger, with what the notice says about it, as it was then.
CREATE TABLE notice_items (
    id          INTEGER PRIMARY KEY,
    -- hold_available, hold_expiring, predue, overdue, card_expiry, lost_bill.
    trigger     TEXT NOT NULL,
    -- The hold, the loan or the patron the trigger is about.
    object_id   INTEGER NOT NULL,
    -- 1 to 3 for overdue notices; the expiry day (YYYYMMDD) for a card; else 0.
    level       INTEGER NOT NULL DEFAULT 0,
    -- Which occurrence: the loan's due_at for predue and overdue notices, the
    -- hold's waiting_since for hold notices; else ''.
    occurrence  TEXT NOT NULL DEFAULT '',
    patron_id   INTEGER NOT NULL REFERENCES patrons(id),
    library_day TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    title       TEXT NOT NULL DEFAULT '',
    author      TEXT NOT NULL DEFAULT '',
    barcode     TEXT NOT NULL DEFAULT '',
    -- The instant that matters: due, pickup deadline, card expiry.
    at          TEXT NOT NULL DEFAULT '',
    branch_id   INTEGER REFERENCES branches(id),
    amount_cents INTEGER NOT NULL DEFAULT 0,
    -- '' until grouped into a message; then email, print, or none (not sent).
    delivery    TEXT NOT NULL DEFAULT '',
    message_id  INTEGER REFERENCES notice_messages(id)
);
CREATE UNIQUE INDEX notice_items_once ON notice_items (trigger, object_id, occurrence, level);
CREATE INDEX notice_items_new ON notice_items (patron_id) WHERE delivery = '';
CREATE INDEX notice_items_message ON notice_items (message_id);

-- The daily runs: a library day is run once, however often the server restarts.
CREATE TABLE notice_runs (
    library_day TEXT PRIMARY KEY,
    started_at  TEXT NOT NULL,
    finished_at TEXT,
    items       INTEGER NOT NULL DEFAULT 0,
    messages    INTEGER NOT NULL DEFAULT 0
);
