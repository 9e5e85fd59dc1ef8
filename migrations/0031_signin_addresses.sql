-- The addresses at which each account signed in successfully (a SIP login, a
-- staff sign-in, a patron's sign-in to the catalogue), with when it last did:
-- the real terminals and desks. Failures from an address known for the account
-- are counted for that address alone; failures from every other address share
-- one slow budget per account, which therefore cannot lock the known addresses
-- out. An address is an IPv4 address or an IPv6 /64.
--   key      'sip:<username>|<address>', 'staff:<username>|<address>' or
--            'patron:<patron id>|<address>'
--   seen_at  the last successful sign-in from it; rows older than the time an
--            address stays known are deleted by the daily jobs.
CREATE TABLE signin_addresses (
    key     TEXT PRIMARY KEY,
    seen_at TEXT NOT NULL
);
CREATE INDEX signin_addresses_seen ON signin_addresses (seen_at);
