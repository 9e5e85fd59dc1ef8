package reports_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/dbtest"
	"github.com/stacks-ils/stacks/reports"
)

// sqliteStatements counts the statements SQLite's own parser finds in q:
// sqlite3_prepare_v2 compiles the first statement (nothing runs) and says
// where the rest begins, until nothing is left. The statements may name only
// the table t(x) of an empty in-memory database.
func sqliteStatements(t *testing.T, q string) (int, error) {
	t.Helper()
	tls := libc.NewTLS()
	defer tls.Close()
	// The handles the library writes back live in its own memory, read with
	// GoBytes (no pointer conversions).
	slots := tls.Alloc(3 * 8)
	defer tls.Free(3 * 8)
	h, stmt, tail := slots, slots+8, slots+16
	read := func(p uintptr) uintptr { return uintptr(binary.NativeEndian.Uint64(libc.GoBytes(p, 8))) }
	name, err := libc.CString(":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer libc.Xfree(tls, name)
	if rc := sqlite3.Xsqlite3_open_v2(tls, name, h, sqlite3.SQLITE_OPEN_READWRITE|sqlite3.SQLITE_OPEN_CREATE, 0); rc != sqlite3.SQLITE_OK {
		t.Fatalf("open: %d", rc)
	}
	defer sqlite3.Xsqlite3_close_v2(tls, read(h))
	create, _ := libc.CString("CREATE TABLE t(x)")
	defer libc.Xfree(tls, create)
	if rc := sqlite3.Xsqlite3_exec(tls, read(h), create, 0, 0, 0); rc != sqlite3.SQLITE_OK {
		t.Fatalf("create: %d", rc)
	}
	cq, err := libc.CString(q)
	if err != nil {
		t.Fatal(err)
	}
	defer libc.Xfree(tls, cq)
	n := 0
	for p := cq; p < cq+uintptr(len(q)); p = read(tail) {
		if rc := sqlite3.Xsqlite3_prepare_v2(tls, read(h), p, -1, stmt, tail); rc != sqlite3.SQLITE_OK {
			return n, fmt.Errorf("%s", libc.GoString(sqlite3.Xsqlite3_errmsg(tls, read(h))))
		}
		if read(stmt) != 0 {
			n++
			sqlite3.Xsqlite3_finalize(tls, read(stmt))
		}
	}
	return n, nil
}

// TestScanSQLAgreesWithSQLite: the SQL check splits statements where SQLite's
// parser does, on inputs whose tokens are easy to read two ways: SQLite's Tcl
// parameters (:a(...), @a(...), $a(...), #a(...), :a::b), which swallow quotes
// and semicolons up to the first ')' or blank; quotes of every kind; comments;
// identifier characters past ASCII. Where SQLite finds a second statement the
// check must count two (and so refuse the report), and where SQLite finds one
// it must not split it. An input the check refuses outright (a parameter not
// closed) is fine whatever SQLite does.
func TestScanSQLAgreesWithSQLite(t *testing.T) {
	for _, q := range []string{
		`SELECT :a('x) ; VACUUM INTO '/tmp/stacks-never.db'`,
		`SELECT :a('x) ; VACUUM INTO '/tmp/stacks-never.db' --'`,
		`SELECT 1 FROM t WHERE x = @b('x) ; SELECT 'a' --'`,
		`SELECT @a('x) ; SELECT 'y'`,
		`SELECT $a('x) ; SELECT 'y'`,
		`SELECT #a('x) ; SELECT 'y'`,
		`SELECT :a(;) FROM t`,
		`SELECT :a(x;y) FROM t`,
		`SELECT :a::b('x) ; SELECT 'y'`,
		`SELECT @::a('x) ; SELECT 'y'`,
		`SELECT :a ('x) ; SELECT 'y')`,
		`SELECT :aé('x) ; SELECT 'y'`,
		`SELECT :a€('x) ; SELECT 'y'`,
		`SELECT :é('x) ; SELECT 'y'`,
		`SELECT 'a;b', "x;y" FROM t`,
		"SELECT `a;b` FROM (SELECT 1 AS `a;b`)",
		`SELECT [a;b] FROM (SELECT 1 AS [a;b])`,
		`SELECT 'it''s; fine'`,
		`SELECT x'41' ; SELECT 2`,
		"SELECT 1 -- a comment; with a semicolon\n",
		"SELECT 1 /* ; */ ; SELECT 2",
		"SELECT 1; -- nothing after\n",
		"SELECT 1;;",
		"SELECT 1 ; /* only a comment */",
		"SELECT a$b FROM (SELECT 1 AS a$b)",
		"SELECT :x FROM t WHERE x = :y",
		"SELECT ?1 ; SELECT 2",
		"SELECT 1\v; SELECT 2",
	} {
		want, err := sqliteStatements(t, q)
		if err != nil {
			t.Logf("%q: SQLite: %v (after %d statements)", q, err, want)
		}
		got, scanErr := reports.ScanStatements(q)
		switch {
		case scanErr != nil:
			t.Logf("%q: refused: %v", q, scanErr)
		case err != nil && got > want:
			// SQLite stopped at an error in a statement the check saw whole.
		case got != want && !(got > 1 && want > 1):
			t.Errorf("%q: the check finds %d statements, SQLite %d", q, got, want)
		}
		if want > 1 {
			if err := reports.CheckSQL(q); err == nil {
				t.Errorf("%q: SQLite finds %d statements and the check lets it through", q, want)
			}
		}
	}
}

// TestRunSQLFullTextMatch: a full-text MATCH on records_fts runs on SQLite
// (FTS5 reads PRAGMA data_version, a counter, which the authorizer lets FTS5
// read); a PRAGMA that is refused is named in the message. On PostgreSQL the
// counterpart is a tsvector match (@@).
func TestRunSQLFullTextMatch(t *testing.T) {
	d := mustSmallDemo(t)
	ctx := context.Background()
	var word string
	if err := d.Read(ctx, func(tx *db.Tx) error {
		var title string
		if err := tx.QueryRow(`SELECT title FROM records ORDER BY id LIMIT 1`).Scan(&title); err != nil {
			return err
		}
		word = strings.Trim(strings.Fields(title)[0], ".,:;'\"")
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	q := `SELECT count(*) FROM records_fts WHERE records_fts MATCH :w`
	if dbtest.Engine() == db.Postgres {
		q = `SELECT count(*) FROM records WHERE to_tsvector('simple', title) @@ plainto_tsquery('simple', :w)`
	}
	res, err := reports.RunSQL(ctx, d, q, map[string]string{"w": word}, reports.Limits{})
	if err != nil {
		t.Fatalf("%s with %q: %v", q, word, err)
	}
	if res.Rows[0][0] == "0" {
		t.Errorf("%s with %q: no match", q, word)
	}
	if dbtest.Engine() != db.Postgres {
		_, err := reports.RunSQL(ctx, d, `SELECT * FROM pragma_table_info('staff_users')`, nil, reports.Limits{})
		if stacks.ErrorCode(err) != stacks.EINVALID || !strings.Contains(stacks.ErrorMessage(err), "pragma_table_info") {
			t.Errorf("%v: want the refusal to name what is refused", err)
		}
	}
}

// TestParameterCastMessage: SQLite reads :from::date as one parameter (a Tcl
// name), so a PostgreSQL-style cast after a parameter is refused, with a message
// that says how to give it a type instead.
func TestParameterCastMessage(t *testing.T) {
	err := reports.CheckSQL(`SELECT * FROM loans WHERE issued_at >= :from::date`)
	if err == nil || !strings.Contains(stacks.ErrorMessage(err), "CAST(:from AS type)") {
		t.Errorf("a cast after a parameter: %v, want a message saying CAST(:from AS type)", err)
	}
	if err := reports.CheckSQL(`SELECT * FROM loans WHERE issued_at >= CAST(:from AS date)`); err != nil {
		t.Errorf("CAST(:from AS date): %v", err)
	}
}
