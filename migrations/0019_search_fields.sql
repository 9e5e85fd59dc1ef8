-- Nothing to do on SQLite: FTS5 answers a search within a field (title:,
-- author:, subject:, isbn:) from its index. PostgreSQL's migration 0019 adds
-- records_fts.words, a vector whose lexemes carry their field, for the same
-- (issue 17). A migration of the same number exists for both engines.
SELECT 1;
