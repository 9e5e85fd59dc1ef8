package db_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stacks-ils/stacks/db"
)

// TestBackup copies a database while a writer keeps committing transactions that
// each add one row to two tables: a consistent copy has as many rows in one as in
// the other, passes SQLite's checks, and holds every commit made before it began.
func TestBackup(t *testing.T) {
	ctx := context.Background()
	d := mustOpenDB(t)
	if _, err := d.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	var next atomic.Int64
	pair := func(tx *db.Tx) error {
		if _, err := tx.Exec(`INSERT INTO preferences (name, value) VALUES (?, 'x')`, "pair-"+strconv.FormatInt(next.Add(1), 10)); err != nil {
			return err
		}
		_, err := tx.Exec(`INSERT INTO audit_log (at, actor, action, detail) VALUES ('2026-01-01T00:00:00Z', 'test', 'pair', ?)`, strings.Repeat("x", 2000))
		return err
	}
	// A few megabytes to copy, so that the copies take long enough to overlap writes.
	err := d.Write(ctx, func(tx *db.Tx) error {
		for i := 0; i < 2000; i++ {
			if err := pair(tx); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	countPairs := func(d *db.DB) (prefs, audit int) {
		t.Helper()
		err := d.Read(ctx, func(tx *db.Tx) error {
			return tx.QueryRow(`SELECT (SELECT count(*) FROM preferences WHERE name LIKE 'pair-%'), (SELECT count(*) FROM audit_log)`).Scan(&prefs, &audit)
		})
		if err != nil {
			t.Fatal(err)
		}
		return prefs, audit
	}

	dir := t.TempDir()
	var stop atomic.Bool
	var wg sync.WaitGroup
	var writes atomic.Int64
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			if err := d.Write(ctx, pair); err != nil {
				t.Error(err)
				return
			}
			writes.Add(1)
		}
	}()
	var copies []string
	for i := 0; i < 3; i++ {
		before, _ := countPairs(d)
		out := filepath.Join(dir, "copy"+string(rune('a'+i))+".db")
		if err := d.Backup(ctx, out); err != nil {
			t.Fatal(err)
		}
		copies = append(copies, out)
		c, err := db.Open(out, db.Options{})
		if err != nil {
			t.Fatal(err)
		}
		prefs, audit := countPairs(c)
		if prefs != audit {
			t.Errorf("copy %d is not one snapshot: %d rows in preferences, %d in audit_log", i, prefs, audit)
		}
		if prefs < before {
			t.Errorf("copy %d has %d pairs, but %d were committed before the backup began", i, prefs, before)
		}
		if vs := runCheck(t, c); len(vs) != 0 {
			t.Errorf("copy %d: %v", i, vs)
		}
		c.Close()
	}
	stop.Store(true)
	wg.Wait()
	if writes.Load() == 0 {
		t.Error("no write was committed while the backups ran: the backup held up the writer")
	}
	t.Logf("%d writes committed during %d backups", writes.Load(), len(copies))

	t.Run("ErrExists", func(t *testing.T) {
		before, _ := os.ReadFile(copies[0])
		err := d.Backup(ctx, copies[0])
		if err == nil || !strings.Contains(err.Error(), "already exists") {
			t.Fatalf("backup onto an existing file: %v", err)
		}
		after, _ := os.ReadFile(copies[0])
		if string(before) != string(after) {
			t.Fatal("the existing file was changed")
		}
	})
	t.Run("ErrItself", func(t *testing.T) {
		if err := d.Backup(ctx, d.Path()); err == nil {
			t.Fatal("backup onto the database itself succeeded")
		}
	})
	t.Run("ErrNoDirectory", func(t *testing.T) {
		out := filepath.Join(dir, "no", "such", "dir", "copy.db")
		if err := d.Backup(ctx, out); err == nil {
			t.Fatal("backup into a missing directory succeeded")
		}
		if _, err := os.Stat(out); err == nil {
			t.Fatal("a failed backup left a file behind")
		}
	})
}
