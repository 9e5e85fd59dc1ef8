package main

import (
	"bytes"
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	_ "modernc.org/sqlite"
)

// smallDemo creates a small demo library (60 titles, 40 patrons) with stacks
// demo, and opens it directly for the test's own checks: its path, the open
// database (closed when the test ends) and count, which runs a query giving one
// number.
func smallDemo(t *testing.T) (path string, sqlDB *sql.DB, count func(q string) int) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "lib.db")
	var out bytes.Buffer
	if err := run(context.Background(), []string{"demo", "--db", path, "--titles", "60", "--patrons", "40"}, &out, &out); err != nil {
		t.Fatalf("demo: %v\n%s", err, out.String())
	}
	sqlDB, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sqlDB.Close() })
	count = func(q string) int {
		t.Helper()
		var n int
		if err := sqlDB.QueryRow(q).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	return path, sqlDB, count
}
