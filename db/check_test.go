package db_test

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
)

// rawExec runs statements on a connection of its own, outside the db package's
// pragmas (foreign keys are off there), to break a database as a bug, a crash or a
// hand edit could.
func rawExec(tb testing.TB, path string, stmts ...string) {
	tb.Helper()
	c, err := sql.Open("sqlite", path)
	if err != nil {
		tb.Fatal(err)
	}
	defer c.Close()
	for _, s := range stmts {
		if _, err := c.Exec(s); err != nil {
			tb.Fatalf("%s: %v", s, err)
		}
	}
}

func runCheck(tb testing.TB, d *db.DB) []stacks.Violation {
	tb.Helper()
	var vs []stacks.Violation
	err := d.Read(context.Background(), func(tx *db.Tx) (err error) {
		vs, err = db.Check(tx)
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
	return vs
}

func TestCheck(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		stmts  []string
		check  string
		detail string
	}{
		{"OK", nil, "", ""},
		{"ErrForeignKey", []string{
			`INSERT INTO loans (item_id, patron_id, branch_id, issued_at, due_at) VALUES (424242, 434343, 1, '2026-01-01T10:00:00Z', '2026-01-22T20:00:00Z')`,
		}, "foreign-key", "of loans names a row of"},
		{"ErrIndexOutOfStep", []string{
			// An index whose stored entries no longer match its definition: what a
			// torn write or a bad hand edit leaves.
			`CREATE TABLE t (a INTEGER, b INTEGER)`,
			`CREATE INDEX t_a ON t (a)`,
			`INSERT INTO t VALUES (1, 3), (2, 2), (3, 1)`,
			`PRAGMA writable_schema = ON`,
			`UPDATE sqlite_schema SET sql = 'CREATE INDEX t_a ON t (b)' WHERE name = 't_a'`,
		}, "integrity", "t_a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := mustOpenDB(t)
			if _, err := d.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			if vs := runCheck(t, d); len(vs) != 0 {
				t.Fatalf("a new database has violations: %v", vs)
			}
			if len(tc.stmts) == 0 {
				return
			}
			// Close first: the schema edit must be read afresh by every connection.
			path := d.Path()
			d.Close()
			rawExec(t, path, tc.stmts...)
			d2, err := db.Open(path, db.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer d2.Close()
			vs := runCheck(t, d2)
			found := false
			for _, v := range vs {
				if v.Check != tc.check {
					t.Errorf("unexpected violation %s", v)
				}
				if strings.Contains(v.Detail, tc.detail) {
					found = true
				}
			}
			if !found {
				t.Fatalf("no %s violation naming %q; got %v", tc.check, tc.detail, vs)
			}
		})
	}
}
