package reports_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/circulation"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/dbtest"
	"github.com/stacks-ils/stacks/demo"
	"github.com/stacks-ils/stacks/demo/demotest"
	"github.com/stacks-ils/stacks/library"
	"github.com/stacks-ils/stacks/patrons"
	"github.com/stacks-ils/stacks/reports"
	"github.com/stacks-ils/stacks/waittest"
)

// mustSmallDemo is a small demo library of the test's own, which it may change.
func mustSmallDemo(t *testing.T) *db.DB {
	t.Helper()
	return demotest.Demo(t, demo.Options{Titles: 50, Patrons: 20}, demoNow, db.Options{})
}

func TestCheckSQL(t *testing.T) {
	for _, q := range []string{
		"SELECT 1",
		"  select title FROM records WHERE title = 'a;b' -- a comment; with a semicolon\n",
		"WITH t AS (SELECT 1 AS x) SELECT x FROM t;",
		"/* why: counts */ SELECT count(*) FROM \"items\" WHERE [status] = 'it''s'",
		"VALUES (1), (2)",
	} {
		if err := reports.CheckSQL(q); err != nil {
			t.Errorf("%q refused: %v", q, err)
		}
	}
	for _, q := range []string{
		"",
		"INSERT INTO branches (code, name) VALUES ('X', 'X')",
		"UPDATE items SET status = 'lost'",
		"DELETE FROM loans",
		"REPLACE INTO preferences VALUES ('a', 'b')",
		"ATTACH DATABASE '/tmp/x.db' AS x",
		"DETACH DATABASE main",
		"PRAGMA query_only = 0",
		"SELECT 1; DELETE FROM loans",
		"SELECT 1; PRAGMA query_only = 0",
		"VACUUM INTO '/tmp/copy.db'",
		"CREATE TABLE t (x)",
		"DROP TABLE loans",
		"SELECT * FROM items WHERE id = ?",
		"SELECT 'unclosed",
		"SELECT 1 /* unclosed",
	} {
		err := reports.CheckSQL(q)
		if err == nil {
			t.Errorf("%q accepted", q)
			continue
		}
		if stacks.ErrorCode(err) != stacks.EINVALID {
			t.Errorf("%q: %v, want a message for the administrator", q, err)
		}
	}
}

// TestRunSQLRefusesWrites: every write is refused with a clear message, by one of
// the three guards, and the database is unchanged.
func TestRunSQLRefusesWrites(t *testing.T) {
	d := mustSmallDemo(t)
	ctx := context.Background()
	count := func() (n int) {
		if err := d.Read(ctx, func(tx *db.Tx) error {
			return tx.QueryRow(`SELECT (SELECT count(*) FROM items) + (SELECT count(*) FROM loans) + (SELECT count(*) FROM branches)`).Scan(&n)
		}); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := count()
	for name, q := range map[string]string{
		"Insert":         "INSERT INTO branches (code, name) VALUES ('X', 'X')",
		"Update":         "UPDATE items SET status = 'lost'",
		"Delete":         "DELETE FROM loans",
		"Attach":         "ATTACH DATABASE '" + filepath.Join(t.TempDir(), "x.db") + "' AS x",
		"PragmaWrite":    "PRAGMA query_only = 0",
		"TwoStatements":  "SELECT 1; DELETE FROM loans",
		"WithDelete":     "WITH old AS (SELECT id FROM loans) DELETE FROM loans WHERE id IN (SELECT id FROM old)",
		"WithInsert":     "WITH b AS (SELECT 'Y' AS c) INSERT INTO branches (code, name) SELECT c, c FROM b",
		"VacuumInto":     "VACUUM INTO '" + filepath.Join(t.TempDir(), "copy.db") + "'",
		"CreateTempView": "CREATE TEMP VIEW v AS SELECT 1",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := reports.RunSQL(ctx, d, q, nil, reports.Limits{})
			if err == nil {
				t.Fatal("ran")
			}
			msg := stacks.ErrorMessage(err)
			if stacks.ErrorCode(err) != stacks.EINVALID || !(strings.Contains(msg, "only read") || strings.Contains(msg, "statements")) {
				t.Errorf("%v: want a clear refusal", err)
			}
			t.Logf("%s", msg)
		})
	}
	if after := count(); after != before {
		t.Errorf("the database changed: %d rows, then %d", before, after)
	}
	// The guards behind CheckSQL: the compiled program (a WITH ... DELETE passes
	// the first keyword check) and the read pool's query_only, which refuses a
	// write even from code that skips both checks.
	err := d.Read(ctx, func(tx *db.Tx) error {
		_, err := tx.Exec(`DELETE FROM loans`)
		return err
	})
	refusal := "readonly" // SQLite's word; PostgreSQL's is below
	if dbtest.Engine() == db.Postgres {
		refusal = "read-only transaction"
	}
	if err == nil || !strings.Contains(err.Error(), refusal) {
		t.Errorf("a write on a read connection: %v, want the engine's refusal (%s)", err, refusal)
	}
}

// TestRunSQLParamsAndRowCap: named parameters are bound by name (numbers as
// numbers), a missing one is asked for, and the row cap stops reading an endless
// result.
func TestRunSQLParamsAndRowCap(t *testing.T) {
	d := mustSmallDemo(t)
	ctx := context.Background()
	q := `SELECT count(*) AS n FROM items WHERE home_branch_id = :branch AND status = :status`
	if s := (reports.SavedReport{SQL: q}).Params(); len(s) != 2 || s[0] != "branch" || s[1] != "status" {
		t.Fatalf("params %v", s)
	}
	res, err := reports.RunSQL(ctx, d, q, map[string]string{"branch": "1", "status": "available"}, reports.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 1 || res.Rows[0][0] == "0" || !res.Columns[0].Numeric {
		t.Errorf("rows %v columns %v", res.Rows, res.Columns)
	}
	if _, err := reports.RunSQL(ctx, d, q, map[string]string{"branch": "1"}, reports.Limits{}); stacks.ErrorField(err) != "param-status" {
		t.Errorf("missing parameter: %v", err)
	}
	res, err = reports.RunSQL(ctx, d, `WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c`, nil, reports.Limits{MaxRows: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 100 || !res.Truncated {
		t.Errorf("%d rows, truncated %v", len(res.Rows), res.Truncated)
	}
	unknown := "no such column: titel" // SQLite's message; PostgreSQL's is below
	if dbtest.Engine() == db.Postgres {
		unknown = `column "titel" does not exist`
	}
	if _, err := reports.RunSQL(ctx, d, `SELECT titel FROM records`, nil, reports.Limits{}); !strings.Contains(stacks.ErrorMessage(err), unknown) {
		t.Errorf("bad column: %v", err)
	}
}

// TestRunSQLValuesAsStored: text comes back as stored, quotes, backslashes,
// line breaks and accents included (PostgreSQL sends each row as JSON, so these
// are the values it escapes), beside a plain one.
func TestRunSQLValuesAsStored(t *testing.T) {
	d := mustSmallDemo(t)
	res, err := reports.RunSQL(context.Background(), d,
		"SELECT 'plain' AS a, 'say \"hi\" \\ back\nCafé' AS b, NULL AS c", nil, reports.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"plain", "say \"hi\" \\ back\nCafé", ""}
	if len(res.Rows) != 1 || !slices.Equal(res.Rows[0], want) {
		t.Errorf("rows %q, want %q", res.Rows, want)
	}
}

// TestRunSQLRunawayDoesNotStallDesk: a recursive query that never ends is stopped
// at its time limit with a clear message, and while it runs (two of them, in
// fact) the desk reads a patron and checks an item out and in through
// circulation.Service, all done before the reports' time limit: the reports do
// not hold the desk up.
func TestRunSQLRunawayDoesNotStallDesk(t *testing.T) {
	d := mustSmallDemo(t)
	ctx := context.Background()
	const runaway = `WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c`
	const limit = 3 * time.Second
	errs := make(chan error, 2)
	started := time.Now()
	for range 2 {
		go func() {
			_, err := reports.RunSQL(ctx, d, runaway, nil, reports.Limits{Timeout: limit})
			errs <- err
		}()
	}
	// Both hold a heavy-read slot's read connection while their query runs.
	waittest.For(t, "both runaway reports to start", func() bool { return d.ReadPoolStats().InUse >= 2 })

	svc := circulation.NewService(d, library.NewPreferenceCache(false))
	desk := stacks.Actor{Name: "desk", BranchID: 1}
	var p *patrons.Patron
	t0 := time.Now()
	if err := d.Read(ctx, func(tx *db.Tx) (err error) { p, err = patrons.FindByCard(tx, "P0001"); return err }); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Checkout(ctx, circulation.CheckoutRequest{Actor: desk, PatronID: p.ID, Barcode: "I00001"}); err != nil {
		t.Fatalf("checkout during a runaway report: %v", err)
	}
	if _, err := svc.Checkin(ctx, circulation.CheckinRequest{Actor: desk, Barcode: "I00001"}); err != nil {
		t.Fatalf("checkin during a runaway report: %v", err)
	}
	desk1 := time.Since(t0)
	select {
	case err := <-errs:
		t.Fatalf("a runaway report ended before the desk's work was done: %v", err)
	default:
	}
	t.Logf("desk: patron, checkout and checkin in %v while two runaway reports ran", desk1.Round(time.Millisecond))
	for range 2 {
		err := <-errs
		if err == nil || !strings.Contains(stacks.ErrorMessage(err), "was stopped") {
			t.Errorf("runaway report: %v, want it stopped with a message", err)
		}
	}
	if took := time.Since(started); took > limit+20*time.Second {
		t.Errorf("the runaway reports were stopped after %v (limit %v)", took, limit)
	}
}
