package db_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stacks-ils/stacks/db"
)

func mustOpenDB(tb testing.TB) *db.DB {
	tb.Helper()
	d, err := db.Open(filepath.Join(tb.TempDir(), "stacks.db"), db.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { d.Close() })
	return d
}

func TestMigrate(t *testing.T) {
	ctx := context.Background()
	ms, err := db.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) == 0 {
		t.Fatal("no migrations embedded")
	}

	t.Run("EmptyDatabase", func(t *testing.T) {
		d := mustOpenDB(t)
		n, err := d.Migrate(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n != len(ms) {
			t.Fatalf("applied %d migrations, want %d", n, len(ms))
		}
		var recorded int
		err = d.Read(ctx, func(tx *db.Tx) error {
			return tx.QueryRow(`SELECT count(*) FROM schema_migrations`).Scan(&recorded)
		})
		if err != nil || recorded != len(ms) {
			t.Fatalf("recorded %d migrations (err %v), want %d", recorded, err, len(ms))
		}
		// The schema is there: every table the issue lists.
		for _, table := range []string{"branches", "staff_users", "patron_categories", "patrons", "item_types",
			"records", "items", "circ_rules", "closed_days", "loans", "holds", "ledger", "preferences", "sessions", "audit_log"} {
			var name string
			err := d.Read(ctx, func(tx *db.Tx) error {
				return tx.QueryRow(`SELECT name FROM sqlite_schema WHERE type = 'table' AND name = ?`, table).Scan(&name)
			})
			if err != nil {
				t.Errorf("table %s: %v", table, err)
			}
		}
	})

	t.Run("UpToDateCostsOneQuery", func(t *testing.T) {
		d := mustOpenDB(t)
		if _, err := d.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		n, err := d.Migrate(ctx)
		if err != nil || n != 0 {
			t.Fatalf("second Migrate applied %d (err %v), want 0", n, err)
		}
	})

	t.Run("ReopenedDatabase", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "stacks.db")
		d, err := db.Open(path, db.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := d.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		d.Close()
		d, err = db.Open(path, db.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		if n, err := d.Migrate(ctx); err != nil || n != 0 {
			t.Fatalf("Migrate after reopen applied %d (err %v), want 0", n, err)
		}
	})

	t.Run("ErrNewerSchema", func(t *testing.T) {
		d := mustOpenDB(t)
		if _, err := d.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		err := d.Write(ctx, func(tx *db.Tx) error {
			_, err := tx.Exec(`INSERT INTO schema_migrations (version, name, applied_at) VALUES (9999, 'future.sql', '2030-01-01T00:00:00Z')`)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := d.Migrate(ctx); err == nil {
			t.Fatal("Migrate accepted a database from a newer version")
		}
	})
}

func TestOpenRefusesMemory(t *testing.T) {
	if _, err := db.Open(":memory:", db.Options{}); err == nil {
		t.Fatal("Open(:memory:) succeeded; it must refuse")
	}
}

func TestPragmas(t *testing.T) {
	d := mustOpenDB(t)
	ctx := context.Background()
	var mode string
	var fk, sync int
	err := d.Write(ctx, func(tx *db.Tx) error {
		if err := tx.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil {
			return err
		}
		if err := tx.QueryRow(`PRAGMA foreign_keys`).Scan(&fk); err != nil {
			return err
		}
		return tx.QueryRow(`PRAGMA synchronous`).Scan(&sync)
	})
	if err != nil {
		t.Fatal(err)
	}
	if mode != "wal" || fk != 1 || sync != 2 {
		t.Fatalf("journal_mode=%s foreign_keys=%d synchronous=%d, want wal, 1, 2 (FULL)", mode, fk, sync)
	}
	// Read connections refuse writes.
	err = d.Read(ctx, func(tx *db.Tx) error {
		_, err := tx.Exec(`CREATE TABLE t (x)`)
		return err
	})
	if err == nil {
		t.Fatal("a read transaction could write")
	}
}

// TestConcurrentWrites: many goroutines writing at once all succeed, none sees
// "database is locked", and nothing is lost.
// TestConcurrentWrites: read-then-write increments from many goroutines lose
// nothing, on each engine.
func TestConcurrentWrites(t *testing.T) {
	forEngines(t, func(t *testing.T, d *db.DB, _ string) { testConcurrentWrites(t, d) })
}

func testConcurrentWrites(t *testing.T, d *db.DB) {
	ctx := context.Background()
	if err := d.Write(ctx, func(tx *db.Tx) error {
		_, err := tx.Exec(`CREATE TABLE counter (n INTEGER NOT NULL)`)
		if err == nil {
			_, err = tx.Exec(`INSERT INTO counter VALUES (0)`)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	const workers, each = 8, 25
	var wg sync.WaitGroup
	errs := make(chan error, 2*workers*each)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				errs <- d.Write(ctx, func(tx *db.Tx) error {
					var n int
					if err := tx.QueryRow(`SELECT n FROM counter`).Scan(&n); err != nil {
						return err
					}
					_, err := tx.Exec(`UPDATE counter SET n = ?`, n+1)
					return err
				})
				var n int
				errs <- d.Read(ctx, func(tx *db.Tx) error { return tx.QueryRow(`SELECT n FROM counter`).Scan(&n) })
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	var n int
	d.Read(ctx, func(tx *db.Tx) error { return tx.QueryRow(`SELECT n FROM counter`).Scan(&n) })
	if n != workers*each {
		t.Fatalf("counter = %d, want %d: a write was lost", n, workers*each)
	}
}

func TestStatsCount(t *testing.T) {
	d := mustOpenDB(t)
	ctx, stats := db.WithStats(context.Background())
	if _, err := d.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	err := d.Write(ctx, func(tx *db.Tx) error {
		if _, err := tx.Exec(`INSERT INTO preferences (name, value) VALUES ('x', '1')`); err != nil {
			return err
		}
		if _, err := tx.Exec(`UPDATE preferences SET value = '2' WHERE name = 'x'`); err != nil {
			return err
		}
		var v string
		if err := tx.QueryRow(`SELECT value FROM preferences WHERE name = 'x'`).Scan(&v); err != nil {
			return err
		}
		_, err := tx.Exec(`DELETE FROM preferences WHERE name = 'x'`)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := stats.Statements(); got != 4 {
		t.Errorf("Statements() = %d, want 4", got)
	}
	s, i, u, del := stats.Kinds()
	if s != 1 || i != 1 || u != 1 || del != 1 {
		t.Errorf("Kinds() = %d %d %d %d, want 1 1 1 1", s, i, u, del)
	}
	if stats.Duration() <= 0 {
		t.Errorf("Duration() = %v, want > 0", stats.Duration())
	}
}

func TestWriteRollsBackOnError(t *testing.T) {
	forEngines(t, func(t *testing.T, d *db.DB, _ string) { testWriteRollsBackOnError(t, d) })
}

func testWriteRollsBackOnError(t *testing.T, d *db.DB) {
	ctx := context.Background()
	err := d.Write(ctx, func(tx *db.Tx) error {
		if _, err := tx.Exec(`INSERT INTO preferences (name, value) VALUES ('rolled', 'back')`); err != nil {
			return err
		}
		return context.Canceled
	})
	if err != context.Canceled {
		t.Fatalf("Write returned %v, want the callback's error", err)
	}
	var n int
	d.Read(ctx, func(tx *db.Tx) error {
		return tx.QueryRow(`SELECT count(*) FROM preferences WHERE name = 'rolled'`).Scan(&n)
	})
	if n != 0 {
		t.Fatal("a failed write transaction was committed")
	}
}

// TestPathWithHash: "#" is an ordinary character in a file name (Go's test
// directories have it); two databases whose paths differ after it are two files.
func TestPathWithHash(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	var ds []*db.DB
	for _, name := range []string{"run#01.db", "run#02.db"} {
		d, err := db.Open(filepath.Join(dir, name), db.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		if _, err := d.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		ds = append(ds, d)
	}
	if err := ds[0].Write(ctx, func(tx *db.Tx) error {
		_, err := tx.Exec(`INSERT INTO preferences (name, value) VALUES ('only_in_first', '1')`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	var n int
	ds[1].Read(ctx, func(tx *db.Tx) error {
		return tx.QueryRow(`SELECT count(*) FROM preferences WHERE name = 'only_in_first'`).Scan(&n)
	})
	if n != 0 {
		t.Fatal("two paths that differ after '#' opened the same database")
	}
	for _, bad := range []string{filepath.Join(dir, "a?b.db"), "file:x.db"} {
		if _, err := db.Open(bad, db.Options{}); err == nil {
			t.Errorf("Open(%q) accepted", bad)
		}
	}
}
