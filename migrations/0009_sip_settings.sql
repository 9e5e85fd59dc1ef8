-- SIP accounts' settings, the terminals' last contact, and lockouts that outlive a
-- restart (issue 14).
--
-- Each account carries the settings Koha's SIP configuration has per account:
--   checked_in_ok        1: a checkin of an item that was not on loan answers ok=1
--                        (sorters want it); 0: ok=0, as Koha and Evergreen do by
--                        default.
--   hold_items           how message 64 lists holds (AS, CD): 'barcode' (item
--                        barcodes a terminal can look up with 17) or 'title'.
--   sort_bins            the sort-bin map (outcome=bin,...); NULL: the server's
--                        --sip-sort-bins.
--   denied_messages      the request messages the account may not send, as their
--                        two-digit identifiers separated by commas ('' : none).
--   contact_without_pin  1: patron information (63) without a PIN returns the
--                        address, email and phone; 0: only with the right PIN.
-- The branch is the existing branch_id.
ALTER TABLE sip_accounts ADD COLUMN checked_in_ok INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sip_accounts ADD COLUMN hold_items TEXT NOT NULL DEFAULT 'barcode';
ALTER TABLE sip_accounts ADD COLUMN sort_bins TEXT;
ALTER TABLE sip_accounts ADD COLUMN denied_messages TEXT NOT NULL DEFAULT '';
ALTER TABLE sip_accounts ADD COLUMN contact_without_pin INTEGER NOT NULL DEFAULT 0;
-- When a terminal last logged in or sent a message with this account (written at
-- most once a minute a connection), and from which address.
-- The accounts that exist already keep answering as they did before this
-- migration: ok 1 for a checkin of an item not on loan (sorters route ok 0 to the
-- exception bin), and contact details without a PIN. New accounts get the
-- defaults above; an administrator can change either on the SIP accounts page.
UPDATE sip_accounts SET checked_in_ok = 1, contact_without_pin = 1;
ALTER TABLE sip_accounts ADD COLUMN last_seen_at TEXT;
ALTER TABLE sip_accounts ADD COLUMN last_seen_addr TEXT NOT NULL DEFAULT '';

-- Failed SIP logins (per account and address) and wrong PINs (per patron), counted
-- before each comparison, and the lockouts they lead to. A row lives while its
-- window or its lockout runs; a success deletes it; staff may lift a lockout.
CREATE TABLE sip_lockouts (
    key          TEXT PRIMARY KEY,  -- 'login:<username>|<address>' or 'pin:<patron id>'
    kind         TEXT NOT NULL,     -- 'login' or 'pin'
    subject      TEXT NOT NULL,     -- the username, or the patron's id
    address      TEXT NOT NULL DEFAULT '',
    failures     INTEGER NOT NULL,
    window_start TEXT NOT NULL,
    locked_until TEXT
);
CREATE INDEX sip_lockouts_window ON sip_lockouts (window_start);
