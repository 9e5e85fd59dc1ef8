package catalog

import (
	"fmt"

	"github.com/stacks-ils/stacks/db"
)

// rebuildSearchSQLite is FTS5's own command for an external-content table:
// it empties the index and reads records again.
var rebuildSearchSQLite = []string{`INSERT INTO records_fts (records_fts) VALUES ('rebuild')`}

// rebuildSearchPostgres empties records_fts and writes every record's vector,
// as the trigger on records writes them one by one.
var rebuildSearchPostgres = []string{
	`DELETE FROM records_fts`,
	`INSERT INTO records_fts (id, doc) SELECT id, records_fts_document(title, author, subjects, isbn) FROM records`,
}

// RebuildSearchIndex rebuilds the catalogue's full-text index from records, in
// tx. The triggers on records keep the index in step with every change; this
// is for records written with the triggers off (stacks copy writes a whole
// library that way, then calls it).
func RebuildSearchIndex(tx *db.Tx) error {
	for _, q := range db.Pick(tx, rebuildSearchSQLite, rebuildSearchPostgres) {
		if _, err := tx.Exec(q); err != nil {
			return fmt.Errorf("rebuild the catalogue's search index: %w", err)
		}
	}
	return nil
}
