package db_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/pgtest"
)

// TestMain stops the PostgreSQL cluster the tests started, if they started one.
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// Tests run on every engine the run selects (pgtest.Engines): each subtest is
// named after its engine. A test that is engine-specific says so in its name
// and its comment and names its counterpart.

// target returns a new, empty database of engine e: a SQLite file, or a
// PostgreSQL database (migrated: a copy of the test template).
func target(t *testing.T, e db.Engine) string {
	t.Helper()
	if e == db.Postgres {
		return pgtest.URL(t)
	}
	return filepath.Join(t.TempDir(), "stacks.db")
}

// forEngines runs fn once per selected engine on a new migrated database.
func forEngines(t *testing.T, fn func(t *testing.T, d *db.DB, url string)) {
	for _, e := range pgtest.Engines() {
		t.Run(e.String(), func(t *testing.T) {
			url := target(t, e)
			d := openMigrated(t, url, db.Options{})
			fn(t, d, url)
		})
	}
}

func openMigrated(t *testing.T, url string, opt db.Options) *db.DB {
	t.Helper()
	d, err := db.Open(url, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	if _, err := d.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return d
}

func TestEngineMigrate(t *testing.T) {
	ctx := context.Background()
	for _, e := range pgtest.Engines() {
		t.Run(e.String(), func(t *testing.T) {
			ms, err := db.MigrationsFor(e)
			if err != nil {
				t.Fatal(err)
			}
			last := ms[len(ms)-1].Version
			url := target(t, e)
			d, err := db.Open(url, db.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			if d.Engine() != e {
				t.Fatalf("Engine() = %v, want %v", d.Engine(), e)
			}
			// The PostgreSQL test database is a copy of a migrated template, so
			// its first Migrate has nothing to do; a new SQLite file has all.
			if _, err := d.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			n, err := d.Migrate(ctx)
			if err != nil || n != 0 {
				t.Fatalf("second Migrate applied %d (err %v), want 0", n, err)
			}
			var count, max int
			if err := d.Read(ctx, func(tx *db.Tx) error {
				return tx.QueryRow(`SELECT count(*), max(version) FROM schema_migrations`).Scan(&count, &max)
			}); err != nil {
				t.Fatal(err)
			}
			if count != last || max != last {
				t.Fatalf("schema_migrations holds %d versions up to %d, want 1 to %d", count, max, last)
			}
		})
	}
}

// TestPostgresMigrateFromEmpty (PostgreSQL only; SQLite's counterpart is
// TestMigrate/EmptyDatabase) migrates a database that has nothing, from two
// servers at once: the baseline is applied once and records every version.
func TestPostgresMigrateFromEmpty(t *testing.T) {
	url := pgtest.URL(t)
	ctx := context.Background()
	// Empty the copy of the template: drop everything the migrations made.
	d0 := openMigrated(t, url, db.Options{})
	if err := d0.Write(ctx, func(tx *db.Tx) error {
		_, err := tx.Exec(`DROP SCHEMA public CASCADE; CREATE SCHEMA public`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	ms, err := db.MigrationsFor(db.Postgres)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	applied := make([]int, 2)
	errs := make([]error, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, err := db.Open(url, db.Options{})
			if err != nil {
				errs[i] = err
				return
			}
			defer d.Close()
			applied[i], errs[i] = d.Migrate(ctx)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if applied[0]+applied[1] != len(ms) {
		t.Fatalf("the two servers applied %d and %d migrations, want %d in all", applied[0], applied[1], len(ms))
	}
	var count int
	if err := d0.Read(ctx, func(tx *db.Tx) error {
		return tx.QueryRow(`SELECT count(*) FROM schema_migrations`).Scan(&count)
	}); err != nil {
		t.Fatal(err)
	}
	if want := ms[len(ms)-1].Version; count != want {
		t.Fatalf("schema_migrations holds %d versions, want %d", count, want)
	}
}

// TestMigrationVersionsAgree: every migration version exists for both engines,
// so that no server of either engine starts on a schema the other lacks.
func TestMigrationVersionsAgree(t *testing.T) {
	lite, err := db.MigrationsFor(db.SQLite)
	if err != nil {
		t.Fatal(err)
	}
	pg, err := db.MigrationsFor(db.Postgres)
	if err != nil {
		t.Fatal(err)
	}
	covered := func(ms []db.Migration) string {
		var b strings.Builder
		for _, m := range ms {
			for v := m.From; v <= m.Version; v++ {
				fmt.Fprintf(&b, "%d ", v)
			}
		}
		return b.String()
	}
	if a, b := covered(lite), covered(pg); a != b {
		t.Fatalf("SQLite's migrations cover %s, PostgreSQL's %s", a, b)
	}
	for _, c := range []struct {
		name       string
		lite, pg   []string
		wantErrHas string
	}{
		{"OK", []string{"0001_a.sql", "0002_b.sql"}, []string{"postgres/0002_baseline.sql"}, ""},
		{"OKAfterBaseline", []string{"0001_a.sql", "0002_b.sql", "0003_c.sql"}, []string{"postgres/0002_baseline.sql", "postgres/0003_c.sql"}, ""},
		{"PostgresLacks", []string{"0001_a.sql", "0002_b.sql", "0003_c.sql"}, []string{"postgres/0002_baseline.sql"}, "version 3 exists for SQLite"},
		{"SQLiteLacks", []string{"0001_a.sql"}, []string{"postgres/0001_baseline.sql", "postgres/0002_b.sql"}, "version 2 exists for PostgreSQL"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := db.CompareVersions(c.lite, c.pg)
			if c.wantErrHas == "" && err != nil {
				t.Fatalf("got %v, want no error", err)
			}
			if c.wantErrHas != "" && (err == nil || !strings.Contains(err.Error(), c.wantErrHas)) {
				t.Fatalf("got %v, want an error saying %q", err, c.wantErrHas)
			}
		})
	}
}

// TestSchemasAgree needs both engines: every table and column of SQLite's schema
// (bar the full-text index, FTS5's records_fts on SQLite and a tsvector table
// of the same name on PostgreSQL, whose columns differ by design) exists on PostgreSQL with a compatible type, so a migration that
// forgets one engine fails here.
func TestSchemasAgree(t *testing.T) {
	if !pgtest.Selected(db.Postgres) || !pgtest.Selected(db.SQLite) {
		t.Skipf("compares the two engines' schemas; this run selects only %v", pgtest.Engines())
	}
	ctx := context.Background()
	lite := openMigrated(t, target(t, db.SQLite), db.Options{})
	pg := openMigrated(t, target(t, db.Postgres), db.Options{})

	type column struct{ table, name string }
	liteCols := map[column]string{}
	if err := lite.Read(ctx, func(tx *db.Tx) error {
		rows, err := tx.Query(`SELECT m.name, p.name, upper(p.type) FROM sqlite_schema m, pragma_table_info(m.name) p
			WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%' AND m.name NOT LIKE 'records_fts%'`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var c column
			var typ string
			if err := rows.Scan(&c.table, &c.name, &typ); err != nil {
				return err
			}
			liteCols[c] = typ
		}
		return rows.Err()
	}); err != nil {
		t.Fatal(err)
	}
	pgCols := map[column]string{}
	if err := pg.Read(ctx, func(tx *db.Tx) error {
		rows, err := tx.Query(`SELECT table_name, column_name, data_type FROM information_schema.columns
			WHERE table_schema = current_schema() AND table_name NOT LIKE 'records_fts%'`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var c column
			var typ string
			if err := rows.Scan(&c.table, &c.name, &typ); err != nil {
				return err
			}
			pgCols[c] = typ
		}
		return rows.Err()
	}); err != nil {
		t.Fatal(err)
	}
	if len(liteCols) < 100 {
		t.Fatalf("read %d SQLite columns; the query is wrong", len(liteCols))
	}
	compatible := map[string][]string{
		"INTEGER": {"bigint", "integer", "smallint"},
		"TEXT":    {"text"},
		"BLOB":    {"bytea"},
	}
	for c, typ := range liteCols {
		got, ok := pgCols[c]
		if !ok {
			t.Errorf("%s.%s (%s) exists on SQLite, not on PostgreSQL", c.table, c.name, typ)
			continue
		}
		want, known := compatible[typ]
		if !known {
			t.Errorf("%s.%s has SQLite type %q, which this test does not know: say what it is on PostgreSQL", c.table, c.name, typ)
			continue
		}
		ok = false
		for _, w := range want {
			ok = ok || got == w
		}
		if !ok {
			t.Errorf("%s.%s is %s on SQLite and %s on PostgreSQL, want one of %v", c.table, c.name, typ, got, want)
		}
	}
	for c := range pgCols {
		if _, ok := liteCols[c]; !ok {
			t.Errorf("%s.%s exists on PostgreSQL, not on SQLite", c.table, c.name)
		}
	}
}

func TestRebind(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"None", `SELECT 1`, `SELECT 1`},
		{"Several", `SELECT a FROM t WHERE b = ? AND c IN (?, ?)`, `SELECT a FROM t WHERE b = $1 AND c IN ($2, $3)`},
		{"InString", `SELECT 'why?' || ?, 'it''s ?' FROM t WHERE x = ?`, `SELECT 'why?' || $1, 'it''s ?' FROM t WHERE x = $2`},
		{"InIdentifier", `SELECT "odd?""name" FROM t WHERE a = ?`, `SELECT "odd?""name" FROM t WHERE a = $1`},
		{"LineComment", "SELECT a -- is it?\nFROM t WHERE a = ?", "SELECT a -- is it?\nFROM t WHERE a = $1"},
		{"BlockComment", `SELECT /* ? */ a FROM t WHERE a = ? /* end?`, `SELECT /* ? */ a FROM t WHERE a = $1 /* end?`},
		{"DollarQuoted", `SELECT $$a?b$$, $x$?$x$, ?`, `SELECT $$a?b$$, $x$?$x$, $1`},
		{"Minus", `SELECT a - ? FROM t`, `SELECT a - $1 FROM t`},
		{"Unterminated", `SELECT 'open ?`, `SELECT 'open ?`},
		{"TenOrMore", `VALUES (?,?,?,?,?,?,?,?,?,?,?)`, `VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11)`},
		// SQLite's numbered parameters: ?1 used twice is one argument; a bare ?
		// after ?2 is parameter 3, as SQLite numbers it.
		{"Numbered", `SELECT a FROM t WHERE a = ?1 OR b = ?1 LIMIT ?2`, `SELECT a FROM t WHERE a = $1 OR b = $1 LIMIT $2`},
		{"NumberedThenBare", `SELECT ?2, ?1, ?`, `SELECT $2, $1, $3`},
		{"NumberedTen", `SELECT ?10, ?`, `SELECT $10, $11`},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := db.Rebind(c.in); got != c.want {
				t.Errorf("Rebind(%q)\n got %q\nwant %q", c.in, got, c.want)
			}
		})
	}
}

// TestNumberedPlaceholders runs SQLite's numbered ?NNN on both engines: the same
// statement text, the same arguments, the same answer.
func TestNumberedPlaceholders(t *testing.T) {
	forEngines(t, func(t *testing.T, d *db.DB, _ string) {
		var a, b, c int64
		if err := d.Read(context.Background(), func(tx *db.Tx) error {
			return tx.QueryRow(`SELECT CAST(?2 AS bigint), CAST(?1 AS bigint) * 2, CAST(? AS bigint)`, 5, 7, 11).Scan(&a, &b, &c)
		}); err != nil {
			t.Fatal(err)
		}
		if a != 7 || b != 10 || c != 11 {
			t.Errorf("SELECT ?2, ?1 * 2, ? with (5, 7, 11): got %d, %d, %d; want 7, 10, 11", a, b, c)
		}
	})
}

// TestBoolArguments stores Go bools in an integer flag column on both engines:
// SQLite keeps them as 1 and 0, and so must PostgreSQL (its driver refuses a
// bool for a bigint column unless db turns it into one).
func TestBoolArguments(t *testing.T) {
	forEngines(t, func(t *testing.T, d *db.DB, _ string) {
		ctx := context.Background()
		if err := d.Write(ctx, func(tx *db.Tx) error {
			if _, err := tx.Exec(`CREATE TABLE flags (id bigint PRIMARY KEY, on_ bigint NOT NULL)`); err != nil {
				return err
			}
			st, err := tx.Prepare(`INSERT INTO flags (id, on_) VALUES (?, ?)`)
			if err != nil {
				return err
			}
			if _, err := st.Exec(1, true); err != nil {
				return err
			}
			_, err = tx.Exec(`INSERT INTO flags (id, on_) VALUES (?, ?)`, 2, false)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		var sum, n int64
		if err := d.Read(ctx, func(tx *db.Tx) error {
			return tx.QueryRow(`SELECT sum(on_), count(*) FROM flags WHERE on_ IN (?, ?)`, true, false).Scan(&sum, &n)
		}); err != nil {
			t.Fatal(err)
		}
		if sum != 1 || n != 2 {
			t.Errorf("flags stored from true and false: sum %d of %d rows, want 1 of 2", sum, n)
		}
	})
}

// TestPlanEach: a statement given db.PlanEach as its first argument runs with
// the arguments after it, on both engines (a bool still stored as 1 or 0, the
// mark itself not taken for an argument). On PostgreSQL it is not kept
// prepared on the connection (pg_prepared_statements lists no such statement,
// where the same statement without the mark is listed after it runs), so that
// every run is planned for its arguments; PostgreSQL would otherwise plan a
// kept statement once for any arguments after its fifth run.
func TestPlanEach(t *testing.T) {
	forEngines(t, func(t *testing.T, d *db.DB, _ string) {
		ctx := context.Background()
		const query = `SELECT CAST(? AS bigint) + CAST(?2 AS bigint), CAST(? AS text) /* plan each */`
		if err := d.Read(ctx, func(tx *db.Tx) error {
			for i := 0; i < 7; i++ {
				var sum int64
				var s string
				if err := tx.QueryRow(query, db.PlanEach, i, true, "x").Scan(&sum, &s); err != nil {
					return err
				}
				if sum != int64(i)+1 || s != "x" {
					t.Errorf("run %d: got %d, %q; want %d, \"x\"", i, sum, s, i+1)
				}
			}
			if !d.Postgres() {
				return nil
			}
			kept := func() (n int, err error) {
				err = tx.QueryRow(`SELECT count(*) FROM pg_prepared_statements WHERE statement LIKE '%/* plan' || ' each */%'`).Scan(&n)
				return n, err
			}
			if n, err := kept(); err != nil || n != 0 {
				t.Errorf("with PlanEach: %d statements kept prepared (%v), want 0", n, err)
			}
			var sum int64
			var s string
			if err := tx.QueryRow(query, 1, 2, "y").Scan(&sum, &s); err != nil {
				return err
			}
			if n, err := kept(); err != nil || n != 1 {
				t.Errorf("without PlanEach: %d statements kept prepared (%v), want 1", n, err)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	})
}

// TestBadTextArguments: a string argument with a NUL or bytes that are not
// UTF-8 (hostile form input) matches nothing on SQLite; PostgreSQL cannot take
// it at all, and the statement fails with EINVALID, a message for the person
// who typed it, rather than the server's "invalid byte sequence" (a 500). The
// outcome is engine-specific; on both, a valid string after it runs as ever.
func TestBadTextArguments(t *testing.T) {
	forEngines(t, func(t *testing.T, d *db.DB, _ string) {
		ctx := context.Background()
		for _, bad := range []string{"abc\xff\xfe", "a\x00b"} {
			var n int64
			err := d.Read(ctx, func(tx *db.Tx) error {
				return tx.QueryRow(`SELECT count(*) FROM (SELECT 'x' AS v) AS t WHERE v = ? OR v = ?`, bad, "y").Scan(&n)
			})
			if d.Postgres() {
				if stacks.ErrorCode(err) != stacks.EINVALID {
					t.Errorf("%q: %v, want EINVALID", bad, err)
				}
			} else if err != nil || n != 0 {
				t.Errorf("%q: %d rows, %v; want none", bad, n, err)
			}
		}
		var n int64
		if err := d.Read(ctx, func(tx *db.Tx) error {
			return tx.QueryRow(`SELECT count(*) FROM (SELECT 'x' AS v) AS t WHERE v = ?`, "x").Scan(&n)
		}); err != nil || n != 1 {
			t.Errorf("a valid string: %d rows, %v", n, err)
		}
	})
}

// TestPlaceholders runs '?' statements on each engine, strings with '?' in
// them included, many times (the rewritten statement comes from the cache).
func TestPlaceholders(t *testing.T) {
	forEngines(t, func(t *testing.T, d *db.DB, _ string) {
		ctx := context.Background()
		for i := range 3 {
			var got string
			var n int64
			if err := d.Read(ctx, func(tx *db.Tx) error {
				return tx.QueryRow(`SELECT 'what?' || ? /* ? */, ? + 1`, "x", i).Scan(&got, &n)
			}); err != nil {
				t.Fatal(err)
			}
			if got != "what?x" || n != int64(i)+1 {
				t.Fatalf("got %q, %d; want %q, %d", got, n, "what?x", i+1)
			}
		}
		if err := d.ReadOne(ctx, func(tx *db.Tx) error {
			var v string
			return tx.QueryRow(`SELECT value FROM preferences WHERE name = ?`, "timezone").Scan(&v)
		}); err != nil {
			t.Fatal(err)
		}
		err := d.Write(ctx, func(tx *db.Tx) error {
			st, err := tx.Prepare(`INSERT INTO preferences (name, value) VALUES (?, ?)`)
			if err != nil {
				return err
			}
			for i := range 3 {
				if _, err := st.Exec(fmt.Sprintf("p%d", i), "?"); err != nil {
					return err
				}
			}
			ids, err := tx.IDs(`SELECT length(name) FROM preferences WHERE name LIKE ? ORDER BY name`, "p_")
			if err != nil {
				return err
			}
			if len(ids) != 3 || ids[0] != 2 {
				return fmt.Errorf("IDs = %v, want three 2s", ids)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}

func TestInsertID(t *testing.T) {
	forEngines(t, func(t *testing.T, d *db.DB, _ string) {
		var ids []int64
		err := d.Write(context.Background(), func(tx *db.Tx) error {
			for _, code := range []string{"A", "B"} {
				id, err := tx.InsertID(`INSERT INTO branches (code, name) VALUES (?, ?) RETURNING id`, code, "Branch "+code)
				if err != nil {
					return err
				}
				ids = append(ids, id)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(ids) != 2 || ids[0] <= 0 || ids[1] != ids[0]+1 {
			t.Fatalf("ids %v, want two consecutive positive ids", ids)
		}
		var code string
		if err := d.Read(context.Background(), func(tx *db.Tx) error {
			return tx.QueryRow(`SELECT code FROM branches WHERE id = ?`, ids[1]).Scan(&code)
		}); err != nil || code != "B" {
			t.Fatalf("branch %d is %q (err %v), want B", ids[1], code, err)
		}
	})
}

func TestIsUniqueViolation(t *testing.T) {
	forEngines(t, func(t *testing.T, d *db.DB, _ string) {
		err := d.Write(context.Background(), func(tx *db.Tx) error {
			_, err := tx.Exec(`INSERT INTO preferences (name, value) VALUES ('timezone', 'UTC')`)
			return err
		})
		if !db.IsUniqueViolation(err) {
			t.Fatalf("IsUniqueViolation(%v) = false, want true", err)
		}
		if db.IsUniqueViolation(fmt.Errorf("wrapped: %w", errors.New("no such table: x"))) {
			t.Fatal("IsUniqueViolation is true for another error")
		}
		// Wrapped, as the domain packages return it.
		if !db.IsUniqueViolation(fmt.Errorf("save: %w", err)) {
			t.Fatal("IsUniqueViolation false for a wrapped violation")
		}
	})
}

// TestWriteRaceTwoServers: two DB values on one database, as two stacks serve
// processes (SQLite: two processes on one file, as CGI), race read-then-write
// transactions: N increments of one counter, and inserts guarded only by a
// check that the row is not there yet. No increment is lost, exactly one guarded
// insert happens, and none fails.
func TestWriteRaceTwoServers(t *testing.T) {
	for _, e := range pgtest.Engines() {
		t.Run(e.String(), func(t *testing.T) {
			url := target(t, e)
			a := openMigrated(t, url, db.Options{WriteConns: 4})
			b := openMigrated(t, url, db.Options{WriteConns: 4})
			ctx := context.Background()
			if err := a.Write(ctx, func(tx *db.Tx) error {
				_, err := tx.Exec(`INSERT INTO preferences (name, value) VALUES ('counter', '0')`)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			const workers, each = 8, 20
			var wg sync.WaitGroup
			var mu sync.Mutex
			var errs []error
			inserted := 0
			for w := range workers {
				d := a
				if w%2 == 1 {
					d = b
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range each {
						err := d.Write(ctx, func(tx *db.Tx) error {
							var n int
							if err := tx.QueryRow(`SELECT CAST(value AS INTEGER) FROM preferences WHERE name = 'counter'`).Scan(&n); err != nil {
								return err
							}
							_, err := tx.Exec(`UPDATE preferences SET value = ? WHERE name = 'counter'`, fmt.Sprint(n+1))
							return err
						})
						did := false
						if err == nil {
							err = d.Write(ctx, func(tx *db.Tx) error {
								did = false
								var there int
								if err := tx.QueryRow(`SELECT count(*) FROM preferences WHERE name = ?`, fmt.Sprintf("once%d", i)).Scan(&there); err != nil {
									return err
								}
								if there > 0 {
									return nil
								}
								did = true
								_, err := tx.Exec(`INSERT INTO preferences (name, value) VALUES (?, 'x')`, fmt.Sprintf("once%d", i))
								return err
							})
						}
						mu.Lock()
						if err != nil {
							errs = append(errs, err)
						}
						if did && err == nil && i == 0 {
							inserted++
						}
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			if len(errs) > 0 {
				t.Fatalf("%d writes failed, the first: %v", len(errs), errs[0])
			}
			var n, onces int
			if err := b.Read(ctx, func(tx *db.Tx) error {
				if err := tx.QueryRow(`SELECT CAST(value AS INTEGER) FROM preferences WHERE name = 'counter'`).Scan(&n); err != nil {
					return err
				}
				return tx.QueryRow(`SELECT count(*) FROM preferences WHERE name LIKE 'once%'`).Scan(&onces)
			}); err != nil {
				t.Fatal(err)
			}
			if n != workers*each {
				t.Errorf("counter = %d, want %d: an increment was lost", n, workers*each)
			}
			if onces != each || inserted != 1 {
				t.Errorf("%d guarded rows (want %d), the first inserted %d times (want 1)", onces, each, inserted)
			}
		})
	}
}

func TestSessionsBothEngines(t *testing.T) {
	forEngines(t, func(t *testing.T, d *db.DB, _ string) {
		s := &db.SessionStore{DB: d, Table: "sessions"}
		data := []byte{0, 1, 2, 255}
		if err := s.Commit("tok", data, time.Now().Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if err := s.Commit("tok", append(data, 7), time.Now().Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		got, found, err := s.Find("tok")
		if err != nil || !found || !bytes.Equal(got, append(data, 7)) {
			t.Fatalf("Find = %v, %v, %v; want the second commit's data", got, found, err)
		}
		if err := s.Commit("old", data, time.Now().Add(-time.Minute)); err != nil {
			t.Fatal(err)
		}
		if _, found, err := s.Find("old"); err != nil || found {
			t.Fatalf("an expired session was found (err %v)", err)
		}
		if err := s.Delete("tok"); err != nil {
			t.Fatal(err)
		}
		if _, found, err := s.Find("tok"); err != nil || found {
			t.Fatalf("a deleted session was found (err %v)", err)
		}
	})
}

func TestStatsBothEngines(t *testing.T) {
	forEngines(t, func(t *testing.T, d *db.DB, _ string) {
		w0, c0 := d.CommitStats()
		ctx, stats := db.WithStats(context.Background())
		err := d.Write(ctx, func(tx *db.Tx) error {
			if _, err := tx.Exec(`INSERT INTO preferences (name, value) VALUES ('x', '1')`); err != nil {
				return err
			}
			var v string
			return tx.QueryRow(`SELECT value FROM preferences WHERE name = ?`, "x").Scan(&v)
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := d.ReadOne(ctx, func(tx *db.Tx) error {
			var v string
			return tx.QueryRow(`SELECT value FROM preferences WHERE name = ?`, "x").Scan(&v)
		}); err != nil {
			t.Fatal(err)
		}
		if got := stats.Statements(); got != 3 {
			t.Errorf("Statements() = %d, want 3 (the write lock and BEGIN/COMMIT are not counted)", got)
		}
		if s, i, _, _ := stats.Kinds(); s != 2 || i != 1 {
			t.Errorf("Kinds() = %d selects, %d inserts; want 2, 1", s, i)
		}
		if stats.Duration() <= 0 {
			t.Errorf("Duration() = %v, want > 0", stats.Duration())
		}
		w1, c1 := d.CommitStats()
		if w1-w0 != 1 || c1-c0 != 1 {
			t.Errorf("CommitStats went from %d/%d to %d/%d, want one more write and commit", w0, c0, w1, c1)
		}
		if d.ReadPoolStats().OpenConnections < 1 || d.WritePoolStats().OpenConnections < 1 {
			t.Errorf("pool stats: read %+v, write %+v; want an open connection in each", d.ReadPoolStats(), d.WritePoolStats())
		}
	})
}

// TestPostgresCheck (PostgreSQL only; SQLite's counterpart is TestCheck): a
// fresh database passes; a constraint added NOT VALID over a row that breaks it
// is reported.
func TestPostgresCheck(t *testing.T) {
	d := openMigrated(t, pgtest.URL(t), db.Options{})
	ctx := context.Background()
	check := func() []string {
		var out []string
		if err := d.Read(ctx, func(tx *db.Tx) error {
			vs, err := db.Check(tx)
			for _, v := range vs {
				out = append(out, v.Check+": "+v.Detail)
			}
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	if vs := check(); len(vs) != 0 {
		t.Fatalf("a fresh database has violations: %v", vs)
	}
	if err := d.Write(ctx, func(tx *db.Tx) error {
		if _, err := tx.Exec(`INSERT INTO branches (code, name) VALUES ('', 'No code')`); err != nil {
			return err
		}
		_, err := tx.Exec(`ALTER TABLE branches ADD CONSTRAINT branches_code_set CHECK (code <> '') NOT VALID`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	vs := check()
	if len(vs) != 1 || !strings.Contains(vs[0], "branches_code_set") {
		t.Fatalf("violations %v, want one naming branches_code_set", vs)
	}
}

// TestPostgresBackup (PostgreSQL only; SQLite's counterpart is TestBackup):
// pg_dump writes a private custom-format dump that pg_restore can read, and
// an existing file is never overwritten.
func TestPostgresBackup(t *testing.T) {
	d := openMigrated(t, pgtest.URL(t), db.Options{})
	ctx := context.Background()
	dest := filepath.Join(t.TempDir(), "copy.dump")
	if err := d.Backup(ctx, dest); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(dest)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != db.PrivateMode {
		t.Errorf("backup mode %v, want %v", fi.Mode().Perm(), db.PrivateMode)
	}
	b, err := os.ReadFile(dest)
	if err != nil || !bytes.HasPrefix(b, []byte("PGDMP")) || !bytes.Contains(b, []byte("loans_current_item")) {
		t.Fatalf("the backup is not a pg_dump custom archive of the library (%d bytes, err %v)", len(b), err)
	}
	if err := d.Backup(ctx, dest); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("a second backup to the same file: %v, want a refusal", err)
	}
}

// TestPostgresOpenErrors (PostgreSQL only: SQLite's refusals are
// TestOpenRefusesMemory): a bad URL and a server that is not there get a
// message saying what to do, and no password in it.
func TestPostgresOpenErrors(t *testing.T) {
	for _, c := range []struct{ name, url, want string }{
		{"BadURL", "postgres://user:secret@host:notaport/db", "expected postgres://"},
		{"NoServer", "postgres://user:secret@127.0.0.1:1/db?connect_timeout=2", "is the server running"},
	} {
		t.Run(c.name, func(t *testing.T) {
			d, err := db.Open(c.url, db.Options{})
			if err == nil {
				d.Close()
				t.Fatal("Open succeeded")
			}
			if !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "secret") {
				t.Fatalf("error %q: want it to say %q and not show the password", err, c.want)
			}
		})
	}
	if got := db.DisplayName("postgres://u:secret@h/db?password=other"); strings.Contains(got, "secret") || strings.Contains(got, "other") {
		t.Fatalf("DisplayName shows the password: %s", got)
	}
}

// TestReadSnapshot: a Read transaction sees one snapshot on both engines, not
// a write committed while it runs.
func TestReadSnapshot(t *testing.T) {
	forEngines(t, func(t *testing.T, d *db.DB, _ string) {
		ctx := context.Background()
		err := d.Read(ctx, func(tx *db.Tx) error {
			var before, after int
			if err := tx.QueryRow(`SELECT count(*) FROM preferences`).Scan(&before); err != nil {
				return err
			}
			if err := d.Write(ctx, func(tx *db.Tx) error {
				_, err := tx.Exec(`INSERT INTO preferences (name, value) VALUES ('during', 'read')`)
				return err
			}); err != nil {
				return err
			}
			if err := tx.QueryRow(`SELECT count(*) FROM preferences`).Scan(&after); err != nil {
				return err
			}
			if after != before {
				return fmt.Errorf("the read saw %d rows, then %d: not one snapshot", before, after)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		var n int
		if err := d.Read(ctx, func(tx *db.Tx) error {
			return tx.QueryRow(`SELECT count(*) FROM preferences WHERE name = 'during'`).Scan(&n)
		}); err != nil || n != 1 {
			t.Fatalf("the write is not there afterwards (%d, %v)", n, err)
		}
	})
}

func TestPerEngine(t *testing.T) {
	forEngines(t, func(t *testing.T, d *db.DB, _ string) {
		stmt := db.PerEngine{
			SQLite:   `SELECT 'sqlite:' || ? WHERE sqlite_version() <> ''`,
			Postgres: `SELECT 'postgres:' || ?::text WHERE version() LIKE 'PostgreSQL%'`,
		}
		var got string
		if err := d.Read(context.Background(), func(tx *db.Tx) error {
			return tx.QueryRow(tx.SQL(stmt), "x").Scan(&got)
		}); err != nil {
			t.Fatal(err)
		}
		if want := d.Engine().String() + ":x"; got != want {
			t.Fatalf("got %q, want %q", got, want)
		}
	})
}

// TestGroupCommitFlushedBeforeAnswer (PostgreSQL only: SQLite's group commit
// is one durable commit, TestGroupCommit's): a batch commits with
// synchronous_commit off, so that the write lock goes at once, and flushes the
// WAL after it; a write must not return before the WAL holding its commit is
// flushed. The WAL writer's own flushes are put off (wal_writer_delay 10 s,
// for this test cluster), so only the writer's flush can have done it.
func TestGroupCommitFlushedBeforeAnswer(t *testing.T) {
	url := pgtest.URL(t)
	ctx := context.Background()
	admin := openMigrated(t, url, db.Options{CommitEach: true})
	// ALTER SYSTEM cannot run in a transaction block: on its own, outside one.
	setDelay := func(v string) {
		t.Helper()
		if err := admin.ReadOne(ctx, func(tx *db.Tx) error {
			if _, err := tx.Exec(`ALTER SYSTEM SET wal_writer_delay = '` + v + `'`); err != nil {
				return err
			}
			_, err := tx.Exec(`SELECT pg_reload_conf()`)
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	setDelay("10s")
	t.Cleanup(func() { setDelay("200ms") })

	// The server's synchronous_commit as a production one has it (the test
	// cluster's default is off).
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	d := openMigrated(t, url+sep+"synchronous_commit=on", db.Options{})
	for i := 0; i < 20; i++ {
		var lsn string
		if err := d.Write(ctx, func(tx *db.Tx) error {
			if _, err := tx.Exec(`INSERT INTO preferences (name, value) VALUES (?, 'x')`, fmt.Sprintf("flush-%d", i)); err != nil {
				return err
			}
			return tx.QueryRow(`SELECT CAST(pg_current_wal_insert_lsn() AS TEXT)`).Scan(&lsn)
		}); err != nil {
			t.Fatal(err)
		}
		var flushed bool
		if err := d.Read(ctx, func(tx *db.Tx) error {
			return tx.QueryRow(`SELECT pg_current_wal_flush_lsn() > CAST(? AS pg_lsn)`, lsn).Scan(&flushed)
		}); err != nil {
			t.Fatal(err)
		}
		if !flushed {
			var f, sc string
			_ = d.Read(ctx, func(tx *db.Tx) error {
				return tx.QueryRow(`SELECT CAST(pg_current_wal_flush_lsn() AS TEXT), current_setting('synchronous_commit')`).Scan(&f, &sc)
			})
			t.Fatalf("write %d returned before the WAL past its commit (after %s) was flushed (flushed to %s, synchronous_commit %s)", i, lsn, f, sc)
		}
	}
}

// TestSessionReadCarriesVersions: in a request, the session lookup reads the
// cache versions the request needs in its one statement, found or not, and
// CacheVersion then answers from the request without another; the versions
// are the database's, and a change after the lookup reaches the next request.
func TestSessionReadCarriesVersions(t *testing.T) {
	forEngines(t, func(t *testing.T, d *db.DB, _ string) {
		s := &db.SessionStore{DB: d, Table: "sessions"}
		data := []byte("session data")
		if err := s.Commit("tok", data, time.Now().Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		set := func(name string, v int64) {
			t.Helper()
			if err := d.Write(context.Background(), func(tx *db.Tx) error {
				_, err := tx.Exec(`UPDATE cache_versions SET version = ? WHERE name = ?`, v, name)
				return err
			}); err != nil {
				t.Fatal(err)
			}
		}
		for round, token := range []string{"tok", "no such token", "tok"} {
			set(db.CachePreferences, int64(100+round))
			set(db.CacheStaff, int64(200+round))
			ctx, stats := db.WithStats(db.WithRequestVersions(context.Background()))
			got, found, err := s.FindCtx(ctx, token)
			if err != nil {
				t.Fatal(err)
			}
			if want := token == "tok"; found != want || (want && !bytes.Equal(got, data)) || (!want && got != nil) {
				t.Fatalf("%q: found %v, data %q", token, found, got)
			}
			// Another process moves a version now: this request keeps what it read.
			set(db.CachePreferences, 999)
			p, err1 := d.CacheVersion(ctx, db.CachePreferences)
			st, err2 := d.CacheVersion(ctx, db.CacheStaff)
			if err1 != nil || err2 != nil {
				t.Fatal(err1, err2)
			}
			if p != int64(100+round) || st != int64(200+round) {
				t.Errorf("%q: versions %d and %d, want %d and %d", token, p, st, 100+round, 200+round)
			}
			if n := stats.Statements(); n != 1 {
				t.Errorf("%q: the session and both versions took %d statements, want 1", token, n)
			}
		}
		// Outside a request the lookup is the plain one.
		if got, found, err := s.Find("tok"); err != nil || !found || !bytes.Equal(got, data) {
			t.Fatalf("Find = %q, %v, %v", got, found, err)
		}
	})
}

// TestVersionedCache: a value is read once while its version stands and again
// once the version moves; a change committed while a value is being read
// reaches the next Get (the value was cached under the version it was read
// with, not the newer one); of two racing reads the newer stays; Invalidate
// and the size bound start again.
func TestVersionedCache(t *testing.T) {
	forEngines(t, func(t *testing.T, d *db.DB, _ string) {
		ctx := context.Background()
		if err := d.Write(ctx, func(tx *db.Tx) error {
			_, err := tx.Exec(`CREATE TABLE vc_test (id INTEGER PRIMARY KEY, v TEXT NOT NULL)`)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		// set changes the value of id and moves the version, in one transaction,
		// as the triggers on cached tables do.
		set := func(id int64, v string) {
			t.Helper()
			if err := d.Write(ctx, func(tx *db.Tx) error {
				if _, err := tx.Exec(`INSERT INTO vc_test (id, v) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET v = excluded.v`, id, v); err != nil {
					return err
				}
				_, err := tx.Exec(`INSERT INTO cache_versions (name, version) VALUES ('vc_test', 1)
					ON CONFLICT (name) DO UPDATE SET version = cache_versions.version + 1`)
				return err
			}); err != nil {
				t.Fatal(err)
			}
		}
		c := db.NewVersionedCache[int64, string]("vc_test", 2)
		loads := 0
		read := func(id int64) func(tx *db.Tx) (string, error) {
			return func(tx *db.Tx) (string, error) {
				loads++
				var v string
				err := tx.QueryRow(`SELECT v FROM vc_test WHERE id = ?`, id).Scan(&v)
				return v, err
			}
		}
		want := func(id int64, load func(*db.Tx) (string, error), v string, n int) {
			t.Helper()
			got, err := c.Get(ctx, d, id, load)
			if err != nil {
				t.Fatal(err)
			}
			if got != v || loads != n {
				t.Fatalf("got %q after %d loads, want %q after %d", got, loads, v, n)
			}
		}
		set(1, "one")
		want(1, read(1), "one", 1)
		want(1, read(1), "one", 1)
		set(1, "two")
		// A change committed while the value is read: the next Get reads again.
		want(1, func(tx *db.Tx) (string, error) {
			v, err := read(1)(tx)
			set(1, "three")
			return v, err
		}, "two", 2)
		want(1, read(1), "three", 3)
		want(1, read(1), "three", 3)

		// Two reads racing: the older finishes last and must not replace the newer.
		set(1, "four")
		started, finish, done := make(chan struct{}), make(chan struct{}), make(chan error)
		go func() {
			_, err := c.Get(ctx, d, 1, func(tx *db.Tx) (string, error) {
				var v string
				err := tx.QueryRow(`SELECT v FROM vc_test WHERE id = 1`).Scan(&v)
				close(started)
				<-finish
				return v, err
			})
			done <- err
		}()
		<-started
		set(1, "five")
		want(1, read(1), "five", 4)
		close(finish)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		want(1, read(1), "five", 4)

		c.Invalidate()
		want(1, read(1), "five", 5)
		// At most two values: a third starts again.
		set(2, "deux")
		set(3, "trois")
		want(1, read(1), "five", 6)
		want(2, read(2), "deux", 7)
		want(1, read(1), "five", 7)
		want(3, read(3), "trois", 8)
		want(1, read(1), "five", 9)
	})
}
