-- The catalogues copy cataloguing searches (package copycat), as the
-- administrator lists them: nothing about any server is built into the program.
--   kind          'sru' (searchRetrieve over HTTP) or 'z3950'
--   address       an SRU base URL (http or https), or a Z39.50 server as
--                 host:port/database
--   syntax        the record syntax asked for: 'MARC21' (ISO 2709, Z39.50's
--                 USMARC) or 'MARCXML' (SRU's only)
--   charset       what ISO 2709 records whose leader does not say UTF-8 are in:
--                 'MARC-8' or 'UTF-8'
--   enabled       1 when searches ask it
--   timeout_ms    how long one search may take there, connecting included
--   isbn_index, title_index, author_index
--                 the CQL indexes an SRU target is searched with; '' is the
--                 default (bath.isbn, dc.title, dc.creator)
CREATE TABLE copycat_targets (
    id           INTEGER PRIMARY KEY,
    name         TEXT NOT NULL UNIQUE,
    kind         TEXT NOT NULL CHECK (kind IN ('sru', 'z3950')),
    address      TEXT NOT NULL,
    syntax       TEXT NOT NULL CHECK (syntax IN ('MARC21', 'MARCXML')),
    charset      TEXT NOT NULL CHECK (charset IN ('UTF-8', 'MARC-8')),
    enabled      INTEGER NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
    timeout_ms   INTEGER NOT NULL CHECK (timeout_ms BETWEEN 1000 AND 30000),
    isbn_index   TEXT NOT NULL DEFAULT '',
    title_index  TEXT NOT NULL DEFAULT '',
    author_index TEXT NOT NULL DEFAULT '',
    created_at   TEXT NOT NULL,
    updated_at   TEXT NOT NULL
);
