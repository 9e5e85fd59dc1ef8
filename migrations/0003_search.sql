-- Full-text search over the catalogue (SQLite FTS5, an external-content index on
-- records). Triggers keep it consistent with records inside the same transaction as
-- every change. "emile" finds "Émile"; "darkness" finds "dark" (porter stemming).
CREATE VIRTUAL TABLE records_fts USING fts5(
    title, author, subjects, isbn,
    content = 'records', content_rowid = 'id',
    tokenize = 'porter unicode61 remove_diacritics 2'
);
INSERT INTO records_fts (records_fts) VALUES ('rebuild');
-- Relevance: bm25 with the title weighted most, then author, subjects, ISBN. As the
-- table's rank function, FTS5 can order by it and stop at the page's end.
INSERT INTO records_fts (records_fts, rank) VALUES ('rank', 'bm25(10.0, 4.0, 2.0, 1.0)');

CREATE TRIGGER records_fts_insert AFTER INSERT ON records BEGIN
    INSERT INTO records_fts (rowid, title, author, subjects, isbn)
    VALUES (new.id, new.title, new.author, new.subjects, new.isbn);
END;
CREATE TRIGGER records_fts_delete AFTER DELETE ON records BEGIN
    INSERT INTO records_fts (records_fts, rowid, title, author, subjects, isbn)
    VALUES ('delete', old.id, old.title, old.author, old.subjects, old.isbn);
END;
CREATE TRIGGER records_fts_update AFTER UPDATE OF title, author, subjects, isbn ON records BEGIN
    INSERT INTO records_fts (records_fts, rowid, title, author, subjects, isbn)
    VALUES ('delete', old.id, old.title, old.author, old.subjects, old.isbn);
    INSERT INTO records_fts (rowid, title, author, subjects, isbn)
    VALUES (new.id, new.title, new.author, new.subjects, new.isbn);
END;
