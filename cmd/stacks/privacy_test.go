package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite"
)

// TestPrivacyRun: stacks privacy run does nothing while the preferences are 0;
// with anonymisation on, --dry-run counts and changes nothing, a run takes the
// patron off every loan returned before the horizon, and a second run finds
// nothing.
func TestPrivacyRun(t *testing.T) {
	ctx := context.Background()
	path, sqlDB, count := smallDemo(t)
	var out bytes.Buffer
	// Every returned loan is older than a day from now on.
	if _, err := sqlDB.Exec(`UPDATE loans SET returned_at = '2000-01-02T00:00:00Z', issued_at = '2000-01-01T00:00:00Z', due_at = '2000-01-20T00:00:00Z' WHERE returned_at IS NOT NULL
		AND id NOT IN (SELECT loan_id FROM ledger WHERE loan_id IS NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	returned := count(`SELECT count(*) FROM loans WHERE returned_at = '2000-01-02T00:00:00Z'`)
	if returned == 0 {
		t.Fatal("the demo library has no returned loans")
	}

	privacyRun := func(args ...string) string {
		t.Helper()
		out.Reset()
		if err := run(ctx, append([]string{"privacy", "run", "--db", path}, args...), &out, &out); err != nil {
			t.Fatalf("privacy run %v: %v\n%s", args, err, out.String())
		}
		return out.String()
	}
	if got := privacyRun(); !strings.Contains(got, "anonymised 0 loans (after 0 days") || count(`SELECT count(*) FROM loans WHERE patron_id IS NULL`) != 0 {
		t.Errorf("with the preferences at 0: %s", got)
	}
	if _, err := sqlDB.Exec(`UPDATE preferences SET value = '1' WHERE name = 'anonymise_loans_after_days'`); err != nil {
		t.Fatal(err)
	}
	if got := privacyRun("--dry-run"); !strings.Contains(got, "(dry run: nothing changed)") || count(`SELECT count(*) FROM loans WHERE patron_id IS NULL`) != 0 {
		t.Errorf("dry run: %s", got)
	}
	got := privacyRun()
	if n := count(`SELECT count(*) FROM loans WHERE patron_id IS NULL AND returned_at = '2000-01-02T00:00:00Z'`); n != returned {
		t.Errorf("%d of %d old loans anonymised; printed %s", n, returned, got)
	}
	if got := privacyRun(); !strings.Contains(got, "anonymised 0 loans") {
		t.Errorf("second run: %s", got)
	}
	out.Reset()
	if err := run(ctx, []string{"check", "--db", path}, &out, &out); err != nil {
		t.Errorf("check after the run: %v\n%s", err, out.String())
	}
}

// TestPrivacyExport: stacks privacy export writes a patron's data as JSON to a
// new private file, refuses an unknown card, and audits the export.
func TestPrivacyExport(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "lib.db")
	var out bytes.Buffer
	if err := run(ctx, []string{"demo", "--db", path, "--titles", "60", "--patrons", "40"}, &out, &out); err != nil {
		t.Fatalf("demo: %v\n%s", err, out.String())
	}
	file := filepath.Join(dir, "p0002.json")
	out.Reset()
	if err := run(ctx, []string{"privacy", "export", "--db", path, "--card", "P0002", "--out", file}, &out, &out); err != nil {
		t.Fatalf("export: %v\n%s", err, out.String())
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var e struct {
		Patron map[string]any   `json:"patron"`
		Ledger []map[string]any `json:"ledger"`
		Loans  []map[string]any `json:"loans"`
	}
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatal(err)
	}
	if e.Patron["surname"] != "Owing" || len(e.Ledger) == 0 || len(e.Loans) == 0 || strings.Contains(string(b), "pin_hash") {
		t.Errorf("export: patron %v, %d ledger rows, %d loans", e.Patron, len(e.Ledger), len(e.Loans))
	}
	if fi, err := os.Stat(file); err != nil || fi.Mode().Perm()&0o077 != 0 {
		t.Errorf("the export file's mode is %v (%v), want private", fi.Mode(), err)
	}
	if err := run(ctx, []string{"privacy", "export", "--db", path, "--card", "P0002", "--out", file}, &out, &out); err == nil {
		t.Error("export over an existing file succeeded")
	}
	if err := run(ctx, []string{"privacy", "export", "--db", path, "--card", "NOPE"}, &out, &out); err == nil {
		t.Error("export of an unknown card succeeded")
	}
	if err := run(ctx, []string{"privacy", "export", "--db", path}, &out, &out); err == nil {
		t.Error("export without --card succeeded")
	}
	sqlDB, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer sqlDB.Close()
	var n int
	if err := sqlDB.QueryRow(`SELECT count(*) FROM audit_log WHERE action = 'patron.export' AND actor = 'cli'`).Scan(&n); err != nil || n != 1 {
		t.Errorf("%d export audit entries (%v), want 1", n, err)
	}
}
