package db_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stacks-ils/stacks/db"
)

// TestStatementCache: kept statements give the same results as fresh ones, run
// again with new arguments, survive a nested run of the same SQL, a schema change
// and eviction, and a failing statement is not kept.
func TestStatementCache(t *testing.T) {
	ctx := context.Background()
	d := mustOpenDB(t)
	write := func(fn func(*db.Tx) error) {
		t.Helper()
		if err := d.Write(ctx, fn); err != nil {
			t.Fatal(err)
		}
	}
	read := func(fn func(*db.Tx) error) {
		t.Helper()
		if err := d.Read(ctx, fn); err != nil {
			t.Fatal(err)
		}
	}
	write(func(tx *db.Tx) error {
		if _, err := tx.Exec(`CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT NOT NULL)`); err != nil {
			return err
		}
		for i := 1; i <= 5; i++ {
			if _, err := tx.Exec(`INSERT INTO t (id, name) VALUES (?, ?)`, i, fmt.Sprintf("n%d", i)); err != nil {
				return err
			}
		}
		return nil
	})
	before := d.StmtCacheStats()
	if before.Misses == 0 || before.Hits < 4 {
		t.Fatalf("five inserts of one statement: %+v, want one miss and hits", before)
	}

	// The same SELECT, again and again, with new arguments.
	for i := 1; i <= 5; i++ {
		var name string
		read(func(tx *db.Tx) error { return tx.QueryRow(`SELECT name FROM t WHERE id = ?`, i).Scan(&name) })
		if name != fmt.Sprintf("n%d", i) {
			t.Fatalf("id %d: %q", i, name)
		}
	}
	if s := d.StmtCacheStats(); s.Hits-before.Hits < 4 {
		t.Errorf("five runs of one SELECT: %+v then %+v, want at least 4 more hits", before, s)
	}

	// A nested run of the SQL whose rows are being read gets a statement of its own.
	const all = `SELECT id FROM t WHERE id >= ? ORDER BY id`
	read(func(tx *db.Tx) error {
		outer, err := tx.Query(all, 1)
		if err != nil {
			return err
		}
		defer outer.Close()
		var got []string
		for outer.Next() {
			var id int
			if err := outer.Scan(&id); err != nil {
				return err
			}
			inner, err := tx.Query(all, id)
			if err != nil {
				return err
			}
			n := 0
			for inner.Next() {
				n++
			}
			inner.Close()
			got = append(got, fmt.Sprintf("%d:%d", id, n))
		}
		if s := strings.Join(got, " "); s != "1:5 2:4 3:3 4:2 5:1" {
			t.Errorf("nested runs of one query: %s", s)
		}
		return outer.Err()
	})

	// A schema change: the kept statement is recompiled by SQLite and sees it.
	const star = `SELECT * FROM t WHERE id = ?`
	cols := func() int {
		var n int
		read(func(tx *db.Tx) error {
			rows, err := tx.Query(star, 1)
			if err != nil {
				return err
			}
			defer rows.Close()
			c, err := rows.Columns()
			n = len(c)
			return err
		})
		return n
	}
	if n := cols(); n != 2 {
		t.Fatalf("%d columns, want 2", n)
	}
	write(func(tx *db.Tx) error {
		_, err := tx.Exec(`ALTER TABLE t ADD COLUMN note TEXT NOT NULL DEFAULT 'x'`)
		return err
	})
	if n := cols(); n != 3 {
		t.Errorf("after ALTER TABLE: %d columns, want 3", n)
	}

	// More distinct statements than a connection keeps: all still right.
	read(func(tx *db.Tx) error {
		for i := range 300 {
			var v int
			if err := tx.QueryRow(fmt.Sprintf(`SELECT %d + count(*) FROM t WHERE id = ?`, i), 1).Scan(&v); err != nil {
				return err
			}
			if v != i+1 {
				t.Fatalf("statement %d: %d", i, v)
			}
		}
		return nil
	})

	// A statement that fails to compile fails every time, and is not kept.
	for range 2 {
		err := d.Read(ctx, func(tx *db.Tx) error {
			_, err := tx.Query(`SELECT nosuchcolumn FROM t`)
			return err
		})
		if err == nil || !strings.Contains(err.Error(), "nosuchcolumn") {
			t.Errorf("bad column: %v", err)
		}
	}
	// A constraint failure on a kept statement leaves it usable.
	for range 2 {
		err := d.Write(ctx, func(tx *db.Tx) error {
			_, err := tx.Exec(`INSERT INTO t (id, name) VALUES (?, ?)`, 1, "dup")
			return err
		})
		if !db.IsUniqueViolation(err) {
			t.Errorf("duplicate id: %v", err)
		}
	}
	write(func(tx *db.Tx) error {
		_, err := tx.Exec(`INSERT INTO t (id, name) VALUES (?, ?)`, 6, "n6")
		return err
	})
}

// TestStatementCacheOff: the option turns it off, results unchanged.
func TestStatementCacheOff(t *testing.T) {
	d, err := db.Open(filepath.Join(t.TempDir(), "off.db"), db.Options{NoStatementCache: true})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for range 3 {
		var v int
		if err := d.Read(context.Background(), func(tx *db.Tx) error { return tx.QueryRow(`SELECT 1 + ?`, 1).Scan(&v) }); err != nil || v != 2 {
			t.Fatalf("%d, %v", v, err)
		}
	}
	if s := d.StmtCacheStats(); s != (db.StmtCacheStats{}) {
		t.Errorf("cache off: %+v", s)
	}
}

// TestReadOne: a one-statement read without a transaction sees committed data and
// is counted; Prepare is refused there.
func TestReadOne(t *testing.T) {
	d := mustOpenDB(t)
	ctx, stats := db.WithStats(context.Background())
	if err := d.Write(ctx, func(tx *db.Tx) error {
		_, err := tx.Exec(`CREATE TABLE k (v TEXT)`)
		if err == nil {
			_, err = tx.Exec(`INSERT INTO k VALUES ('x')`)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	var v string
	if err := d.ReadOne(ctx, func(tx *db.Tx) error { return tx.QueryRow(`SELECT v FROM k`).Scan(&v) }); err != nil || v != "x" {
		t.Fatalf("ReadOne: %q, %v", v, err)
	}
	if stats.Statements() != 3 {
		t.Errorf("%d statements counted, want 3", stats.Statements())
	}
	err := d.ReadOne(ctx, func(tx *db.Tx) error {
		_, err := tx.Prepare(`SELECT v FROM k`)
		return err
	})
	if err == nil {
		t.Error("Prepare inside ReadOne was allowed")
	}
}
