package db_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stacks-ils/stacks/db"
)

// TestMigrateUpToDateCGI: the way a CGI request opens the database (an existing
// file, one read connection, no group commit), an up-to-date schema is checked
// without any write: no write connection is ever opened, and one read connection
// is (no schema work when the schema version matches).
func TestMigrateUpToDateCGI(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "stacks.db")
	setup, err := db.Open(path, db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := setup.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	setup.Close()

	cgiOpen := func() *db.DB {
		d, err := db.Open(path, db.Options{ReadConns: 1, CommitEach: true, ExistingFile: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { d.Close() })
		return d
	}

	t.Run("UpToDate", func(t *testing.T) {
		d := cgiOpen()
		n, err := d.Migrate(ctx)
		if err != nil || n != 0 {
			t.Fatalf("Migrate applied %d (err %v), want 0", n, err)
		}
		if w := d.WritePoolStats().OpenConnections; w != 0 {
			t.Errorf("%d write connections opened to check an up-to-date schema, want 0", w)
		}
		if r := d.ReadPoolStats().OpenConnections; r != 1 {
			t.Errorf("%d read connections open, want 1", r)
		}
	})

}
