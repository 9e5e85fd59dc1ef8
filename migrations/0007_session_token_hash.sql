-- The sessions table keeps the SHA-256 of each session token, not the token: the
-- browser's cookie holds the token, and a lookup hashes it (web/session_store.go).
-- So a copy of the database (a backup, a file left readable) holds no live
-- credential. The rows written before held the tokens themselves; they are
-- dropped, and whoever was signed in signs in again.
DROP TABLE sessions;
CREATE TABLE sessions (
    token_hash TEXT PRIMARY KEY,
    data       BLOB NOT NULL,
    expiry     TEXT NOT NULL
);
CREATE INDEX sessions_expiry ON sessions (expiry);
