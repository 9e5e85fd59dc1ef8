-- The addresses at which each account signed in successfully: see SQLite's
-- 0031_signin_addresses.sql.
CREATE TABLE signin_addresses (
    key     text PRIMARY KEY,
    seen_at text NOT NULL
);
CREATE INDEX signin_addresses_seen ON signin_addresses (seen_at);
