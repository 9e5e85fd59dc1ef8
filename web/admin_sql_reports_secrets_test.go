package web_test

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/dbtest"
)

// runSavedReport saves a report through the page and runs it, returning the
// answer to the run.
func runSavedReport(t *testing.T, e *testEnv, admin *http.Client, name, sql string, params url.Values) response {
	t.Helper()
	r := e.post(t, admin, "/admin/sql-reports", url.Values{"name": {name}, "sql": {sql}})
	if r.Status != http.StatusSeeOther {
		t.Fatalf("save %s: %d %s", name, r.Status, r.Body)
	}
	q := url.Values{}
	for k, v := range params {
		q[k] = v
	}
	return e.post(t, admin, r.Location+"/run", q)
}

// TestSQLReportPagesKeepSecrets: through the pages, a saved report that reads
// the password and PIN hashes (on PostgreSQL through a SELECT given to
// ts_rewrite as a string, which its plan does not show) shows none of the
// hashes the database holds; a full-text MATCH runs; a statement that SQLite
// reads as two (:a('x) ; VACUUM INTO ...) is refused when saved, and the copy
// it names is never written.
func TestSQLReportPagesKeepSecrets(t *testing.T) {
	e := newDemoEnv(t)
	admin := e.client(t)
	if r := e.login(t, admin, "admin", "admin"); r.Status != http.StatusSeeOther {
		t.Fatalf("login: %d", r.Status)
	}
	var hashes []string
	if err := e.DB.Read(context.Background(), func(tx *db.Tx) error {
		rows, err := tx.Query(`SELECT password_hash FROM staff_users UNION ALL SELECT pin_hash FROM patrons WHERE pin_hash <> '' UNION ALL SELECT password_hash FROM sip_accounts`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var h string
			if err := rows.Scan(&h); err != nil {
				return err
			}
			hashes = append(hashes, h)
		}
		return rows.Err()
	}); err != nil {
		t.Fatal(err)
	}
	if len(hashes) < 3 {
		t.Fatalf("%d hashes in the demo library: the test would pass for nothing", len(hashes))
	}
	payloads := []string{`SELECT username, password_hash FROM staff_users`, `SELECT card, pin_hash FROM patrons`}
	if dbtest.Engine() == db.Postgres {
		payloads = []string{
			`SELECT ts_rewrite('x'::tsquery, 'SELECT ''x''::tsquery, quote_literal(password_hash)::tsquery FROM staff_users LIMIT 1')::text`,
			`SELECT ts_rewrite('x'::tsquery, 'SELECT ''x''::tsquery, quote_literal(pin_hash)::tsquery FROM patrons WHERE pin_hash <> '''' LIMIT 1')::text`,
			`SELECT attname, most_common_vals::text FROM pg_stats WHERE schemaname = current_schema()`,
		}
	}
	for i, q := range payloads {
		r := runSavedReport(t, e, admin, "Secrets "+string(rune('A'+i)), q, nil)
		body := html.UnescapeString(r.Body)
		for _, h := range hashes {
			if i := strings.LastIndexByte(h, '$'); i >= 0 && strings.Contains(body, h[i+1:]) {
				t.Errorf("%s: the page shows a hash (%d)", q, r.Status)
				break
			}
		}
	}

	// A full-text MATCH runs (on PostgreSQL, a tsvector match).
	match := `SELECT count(*) AS n FROM records_fts WHERE records_fts MATCH :w`
	if dbtest.Engine() == db.Postgres {
		match = `SELECT count(*) AS n FROM records WHERE to_tsvector('simple', title) @@ plainto_tsquery('simple', :w)`
	}
	var title string
	if err := e.DB.Read(context.Background(), func(tx *db.Tx) error {
		return tx.QueryRow(`SELECT title FROM records ORDER BY id LIMIT 1`).Scan(&title)
	}); err != nil {
		t.Fatal(err)
	}
	word := strings.Trim(strings.Fields(title)[0], ".,:;'\"")
	if r := runSavedReport(t, e, admin, "Titles matching", match, url.Values{"p_w": {word}}); r.Status != http.StatusOK || strings.Contains(r.Body, "PRAGMA") {
		t.Errorf("MATCH %q: %d, %s", word, r.Status, r.Body)
	}

	// Two statements to SQLite: refused when saved, beside the field.
	copyPath := filepath.Join(t.TempDir(), "copy.db")
	r := e.post(t, admin, "/admin/sql-reports", url.Values{"name": {"Vacuum"}, "sql": {`SELECT :a('x) ; VACUUM INTO '` + copyPath + `' --'`}})
	if r.Status != http.StatusUnprocessableEntity || !strings.Contains(r.Body, "plain name") {
		t.Errorf("a Tcl parameter hiding a second statement: %d", r.Status)
	}
	if _, err := os.Stat(copyPath); err == nil {
		t.Errorf("%s was written", copyPath)
	}
}
