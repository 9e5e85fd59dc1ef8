package db_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/pgtest"
)

// TestStalePlanAfterMigration: two servers on one PostgreSQL database; one
// changes a table's columns (as a migration does) while the other holds a
// prepared statement whose result those columns make. The other's next read of
// it succeeds (run again after its connections drop their statements), and a
// write that meets a stale statement fails once, saying to try again, then
// succeeds.
func TestStalePlanAfterMigration(t *testing.T) {
	url := pgtest.URL(t)
	ctx := context.Background()
	a := openMigrated(t, url, db.Options{})
	// One connection per pool: the statement the test prepares is on the
	// connection the next read and write get.
	b := openMigrated(t, url, db.Options{ReadConns: 1, WriteConns: 1})

	count := func(tx *db.Tx) error {
		rows, err := tx.Query(`SELECT * FROM charge_types WHERE default_cents >= ?`, 0)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
		}
		return rows.Err()
	}
	migrate := func(column string) {
		t.Helper()
		if err := a.Write(ctx, func(tx *db.Tx) error {
			_, err := tx.Exec(`ALTER TABLE charge_types ADD COLUMN ` + column + ` text NOT NULL DEFAULT ''`)
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("Read", func(t *testing.T) {
		if err := b.Read(ctx, count); err != nil {
			t.Fatal(err)
		}
		migrate("note_read")
		if err := b.Read(ctx, count); err != nil {
			t.Errorf("read after another server's migration: %v", err)
		}
	})
	t.Run("ReadOne", func(t *testing.T) {
		if err := b.ReadOne(ctx, count); err != nil {
			t.Fatal(err)
		}
		migrate("note_read_one")
		if err := b.ReadOne(ctx, count); err != nil {
			t.Errorf("single read after another server's migration: %v", err)
		}
	})
	t.Run("Write", func(t *testing.T) {
		if err := b.Write(ctx, count); err != nil {
			t.Fatal(err)
		}
		migrate("note_write")
		err := b.Write(ctx, count)
		if stacks.ErrorCode(err) != stacks.ECONFLICT || !strings.Contains(stacks.ErrorMessage(err), "try again") {
			t.Errorf("write after another server's migration: %v, want a conflict saying to try again", err)
		}
		if err := b.Write(ctx, count); err != nil {
			t.Errorf("the write tried again: %v", err)
		}
	})
}
