package main

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/catalog"
	"github.com/stacks-ils/stacks/circulation"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/pgtest"

	_ "github.com/jackc/pgx/v5/stdlib"
)

// TestCopyRoundTrip: the demo library, with sessions holding every byte value,
// goes SQLite → PostgreSQL → SQLite with stacks copy. stacks check passes on all
// three; every table's rows are the same, value for value and type for type,
// on the first and last SQLite files and (read independently of stacks copy's
// own checksums) on PostgreSQL; the copied PostgreSQL library finds what the
// original finds, and lends a book under a new loan id. Copying onto it again
// is refused without --replace.
func TestCopyRoundTrip(t *testing.T) {
	ctx := context.Background()
	first := newDemoDB(t)
	blob := make([]byte, 256)
	for i := range blob {
		blob[i] = byte(i)
	}
	lite := openSQL(t, "sqlite", first)
	for _, q := range []string{
		`INSERT INTO sessions (token_hash, data, expiry) VALUES ('t1', ?, '2099-01-01T00:00:00Z')`,
		`INSERT INTO opac_sessions (token_hash, data, expiry) VALUES ('Zt2', ?, '2099-01-01T00:00:00Z')`,
	} {
		if _, err := lite.Exec(q, blob); err != nil {
			t.Fatal(err)
		}
	}
	pgURL := pgtest.URL(t)
	last := filepath.Join(t.TempDir(), "last.db")

	for _, step := range [][2]string{{first, pgURL}, {pgURL, last}} {
		var out bytes.Buffer
		if err := run(ctx, []string{"copy", "--from", step[0], "--to", step[1]}, &out, &out); err != nil {
			t.Fatalf("stacks copy --from %s --to %s: %v\n%s", db.DisplayName(step[0]), db.DisplayName(step[1]), err, out.String())
		}
		if !strings.Contains(out.String(), "copy verified") || strings.Contains(out.String(), "DIFFERENT") {
			t.Errorf("stacks copy did not verify the copy:\n%s", out.String())
		}
	}
	for _, target := range []string{first, pgURL, last} {
		var out bytes.Buffer
		if err := run(ctx, []string{"check", "--db", target}, &out, &out); err != nil {
			t.Errorf("stacks check --db %s: %v\n%s", db.DisplayName(target), err, out.String())
		}
	}

	lastDB := openSQL(t, "sqlite", last)
	pg := openSQL(t, "pgx", pgURL)
	tables := sqliteTables(t, lite)
	if len(tables) < 30 {
		t.Fatalf("found %d tables in the demo library; the query is wrong", len(tables))
	}
	for _, tbl := range tables {
		want := quotedRows(t, lite, tbl)
		if got := quotedRows(t, lastDB, tbl); !slices.Equal(got, want) {
			t.Errorf("%s: %d rows after the round trip, %d before, or their values differ (first difference: %s)", tbl, len(got), len(want), firstDiff(want, got))
		}
		cols, _ := sqliteColumns(t, lite, tbl)
		if liteRows, pgRows := typedRows(t, lite, tbl, cols), typedRows(t, pg, tbl, cols); !slices.Equal(liteRows, pgRows) {
			t.Errorf("%s: %d rows on SQLite, %d on PostgreSQL, or their values differ (first difference: %s)", tbl, len(liteRows), len(pgRows), firstDiff(liteRows, pgRows))
		}
	}

	// The copied PostgreSQL library finds what the original finds.
	src, err := db.Open(first, db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := db.Open(pgURL, db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	var title string
	if err := lite.QueryRow(`SELECT title FROM records ORDER BY id DESC LIMIT 1`).Scan(&title); err != nil {
		t.Fatal(err)
	}
	word := strings.Fields(title)[0]
	search := func(d *db.DB) []int64 {
		var ids []int64
		err := d.Read(ctx, func(tx *db.Tx) error {
			res, err := catalog.Search(tx, catalog.SearchQuery{Text: word, Sort: "title", PerPage: 100, NoBarcode: true})
			for _, h := range res.Hits {
				ids = append(ids, h.RecordID)
			}
			return err
		})
		if err != nil {
			t.Fatalf("search for %q: %v", word, err)
		}
		return ids
	}
	want := search(src)
	if len(want) == 0 {
		t.Fatalf("a search for %q finds nothing in the demo library", word)
	}
	if got := search(dst); !slices.Equal(got, want) {
		t.Errorf("a search for %q finds %v on the copied PostgreSQL library, %v on the original", word, got, want)
	}

	// A checkout on PostgreSQL takes a fresh loan id: the sequences moved on.
	var maxLoan, deskID, branchID, patronID int64
	var barcode string
	if err := lite.QueryRow(`SELECT max(id) FROM loans`).Scan(&maxLoan); err != nil {
		t.Fatal(err)
	}
	if err := lite.QueryRow(`SELECT id, branch_id FROM staff_users WHERE username = 'desk'`).Scan(&deskID, &branchID); err != nil {
		t.Fatal(err)
	}
	if err := lite.QueryRow(`SELECT id FROM patrons WHERE blocked = 0 ORDER BY id LIMIT 1`).Scan(&patronID); err != nil {
		t.Fatal(err)
	}
	if err := lite.QueryRow(`SELECT i.barcode FROM items i JOIN item_types t ON t.id = i.item_type_id
		WHERE i.status = 'available' AND t.not_for_loan = 0 AND i.current_branch_id = ?
		AND NOT EXISTS (SELECT 1 FROM holds h WHERE h.record_id = i.record_id AND h.status IN ('queued', 'in_transit', 'waiting'))
		ORDER BY i.id LIMIT 1`, branchID).Scan(&barcode); err != nil {
		t.Fatal(err)
	}
	res, err := circulation.NewService(dst, nil).Checkout(ctx, circulation.CheckoutRequest{
		Actor:    stacks.Actor{StaffID: deskID, Name: "desk", BranchID: branchID},
		PatronID: patronID, Barcode: barcode, AutoConfirm: func(circulation.Block) bool { return true },
	})
	if err != nil {
		t.Fatalf("checkout of %s on the copied PostgreSQL library: %v", barcode, err)
	}
	if res.Loan.ID <= maxLoan {
		t.Errorf("the new loan has id %d, not past the copied loans' largest, %d", res.Loan.ID, maxLoan)
	}

	// The PostgreSQL database now holds a library: refused as a target
	// without --replace and left as it is; with --replace it becomes the
	// source's library again.
	if _, err := pg.Exec(`INSERT INTO branches (code, name) VALUES ('NEW', 'Only on the target')`); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	err = run(ctx, []string{"copy", "--from", first, "--to", pgURL}, &out, &out)
	if err == nil || !strings.Contains(err.Error(), "already holds a library") || !strings.Contains(err.Error(), "--replace") {
		t.Fatalf("copy onto a PostgreSQL library: %v\n%s; want a refusal naming --replace", err, out.String())
	}
	newBranches := func() (n int) {
		if err := pg.QueryRow(`SELECT count(*) FROM branches WHERE code = 'NEW'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := newBranches(); n != 1 {
		t.Fatalf("the refused copy changed the target: %d NEW branches", n)
	}
	out.Reset()
	if err := run(ctx, []string{"copy", "--from", first, "--to", pgURL, "--replace"}, &out, &out); err != nil {
		t.Fatalf("copy --replace onto PostgreSQL: %v\n%s", err, out.String())
	}
	if n := newBranches(); n != 0 {
		t.Errorf("copy --replace kept the target's own branch")
	}
}

// TestCopyRefusals: stacks copy refuses what it cannot do well, says why and
// what to do, and leaves the target as it was (SQLite; TestCopyRoundTrip ends
// with a PostgreSQL target that holds a library).
func TestCopyRefusals(t *testing.T) {
	ctx := context.Background()
	src := newDemoDB(t)
	copyTo := func(args ...string) (string, error) {
		var out bytes.Buffer
		err := run(ctx, append([]string{"copy"}, args...), &out, &out)
		return out.String(), err
	}

	t.Run("ErrNotEmpty", func(t *testing.T) {
		dst := filepath.Join(t.TempDir(), "copy.db")
		copyDB(t, src, dst)
		c := openSQL(t, "sqlite", dst)
		if _, err := c.Exec(`INSERT INTO branches (code, name) VALUES ('NEW', 'Only on the target')`); err != nil {
			t.Fatal(err)
		}
		out, err := copyTo("--from", src, "--to", dst)
		if err == nil || !strings.Contains(err.Error(), "already holds a library") || !strings.Contains(err.Error(), "--replace") {
			t.Fatalf("copy onto a library: %v\n%s; want a refusal naming --replace", err, out)
		}
		var n int
		if err := c.QueryRow(`SELECT count(*) FROM branches WHERE code = 'NEW'`).Scan(&n); err != nil || n != 1 {
			t.Fatalf("the refused copy changed the target: %d NEW branches (%v)", n, err)
		}
		if out, err := copyTo("--from", src, "--to", dst, "--replace"); err != nil {
			t.Fatalf("copy --replace: %v\n%s", err, out)
		}
		if err := c.QueryRow(`SELECT count(*) FROM branches WHERE code = 'NEW'`).Scan(&n); err != nil || n != 0 {
			t.Errorf("copy --replace kept the target's own branch (%d, %v)", n, err)
		}
	})

	t.Run("ErrBadURL", func(t *testing.T) {
		dir := t.TempDir()
		for _, to := range []string{"mysql://stacks@dbhost/library", "postgres://stacks@[::1/library", "postgres://stacks:hunter2@127.0.0.1:1/none?connect_timeout=2"} {
			out, err := copyTo("--from", src, "--to", to)
			if err == nil || strings.Contains(err.Error()+out, "hunter2") || strings.Contains(err.Error()+out, "goroutine") {
				t.Errorf("copy --to %s: %v\n%s; want a refusal without the password", to, err, out)
				continue
			}
			msg := err.Error()
			if !strings.Contains(msg, "postgres://") || !(strings.Contains(msg, "URL") || strings.Contains(msg, "is the server running")) {
				t.Errorf("copy --to %s: %q does not say what a good target looks like", to, msg)
			}
		}
		if entries, _ := os.ReadDir(dir); len(entries) > 0 {
			t.Errorf("a refused copy left %v", entries)
		}
	})

	t.Run("ErrSourceMissing", func(t *testing.T) {
		dir := t.TempDir()
		missing := filepath.Join(dir, "none.db")
		dst := filepath.Join(dir, "copy.db")
		out, err := copyTo("--from", missing, "--to", dst)
		if err == nil || !strings.Contains(err.Error(), "does not exist") || !strings.Contains(err.Error(), "--from") {
			t.Fatalf("copy from a file that does not exist: %v\n%s", err, out)
		}
		for _, p := range []string{missing, dst} {
			if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("the refused copy created %s", p)
			}
		}
	})

	t.Run("ErrSourceVersion", func(t *testing.T) {
		for _, c := range []struct {
			name, change, want string
		}{
			{"Newer", `INSERT INTO schema_migrations (version, name, applied_at) VALUES (9999, '9999_future.sql', '2099-01-01T00:00:00Z')`, "newer than this stacks binary"},
			{"Older", `DELETE FROM schema_migrations WHERE version = (SELECT max(version) FROM schema_migrations)`, "run stacks migrate --db"},
		} {
			t.Run(c.name, func(t *testing.T) {
				dir := t.TempDir()
				old := filepath.Join(dir, "lib.db")
				copyDB(t, src, old)
				if _, err := openSQL(t, "sqlite", old).Exec(c.change); err != nil {
					t.Fatal(err)
				}
				dst := filepath.Join(dir, "copy.db")
				out, err := copyTo("--from", old, "--to", dst)
				if err == nil || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("copy from a library at another schema version: %v\n%s; want %q", err, out, c.want)
				}
				if _, err := os.Stat(dst); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("the refused copy created %s", dst)
				}
			})
		}
	})

	t.Run("ErrSameDatabase", func(t *testing.T) {
		out, err := copyTo("--from", src, "--to", src)
		if err == nil || !strings.Contains(err.Error(), "both name") {
			t.Fatalf("copy onto itself: %v\n%s", err, out)
		}
	})
}

func openSQL(t *testing.T, driver, dsn string) *sql.DB {
	t.Helper()
	c, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// sqliteTables lists a library's tables, full-text index and migrations
// bookkeeping left out.
func sqliteTables(t *testing.T, c *sql.DB) []string {
	t.Helper()
	rows, err := c.Query(`SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\_%' ESCAPE '\'
		AND name NOT LIKE 'records\_fts%' ESCAPE '\' AND name <> 'schema_migrations' ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		out = append(out, n)
	}
	return out
}

// sqliteColumns returns a table's columns and its primary key's.
func sqliteColumns(t *testing.T, c *sql.DB, table string) (cols, key []string) {
	t.Helper()
	rows, err := c.Query(`SELECT name, pk FROM pragma_table_info(?) ORDER BY pk, cid`, table)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var n string
		var pk int
		if err := rows.Scan(&n, &pk); err != nil {
			t.Fatal(err)
		}
		cols = append(cols, n)
		if pk > 0 {
			key = append(key, n)
		}
	}
	if len(key) == 0 {
		t.Fatalf("%s has no primary key", table)
	}
	return cols, key
}

// quotedRows returns every row of a SQLite table as SQLite quotes its values
// (X'..' for a blob, '..' for text, digits for an integer, NULL), sorted.
func quotedRows(t *testing.T, c *sql.DB, table string) []string {
	t.Helper()
	cols, _ := sqliteColumns(t, c, table)
	var exprs []string
	for _, col := range cols {
		exprs = append(exprs, fmt.Sprintf(`quote("%s")`, col))
	}
	rows, err := c.Query(`SELECT ` + strings.Join(exprs, ` || ',' || `) + ` FROM "` + table + `"`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// typedRows reads every row of a table, each value printed with its Go type
// as the driver gives it (int64(3), "text", []byte{0x0, ...}, <nil>), sorted.
func typedRows(t *testing.T, c *sql.DB, table string, cols []string) []string {
	t.Helper()
	var quoted []string
	for _, col := range cols {
		quoted = append(quoted, `"`+col+`"`)
	}
	rows, err := c.Query(`SELECT ` + strings.Join(quoted, ", ") + ` FROM "` + table + `"`)
	if err != nil {
		t.Fatalf("read %s: %v", table, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%#v", vals))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

func firstDiff(a, b []string) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return fmt.Sprintf("%q before, %q after", a[i], b[i])
		}
	}
	return "one list is longer"
}
