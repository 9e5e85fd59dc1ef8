package reports_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/reports"
)

// TestRunSQLHidesSecrets: the password and PIN hashes read as empty (the rows
// still come), everywhere in the statement, so a WHERE cannot guess them.
func TestRunSQLHidesSecrets(t *testing.T) {
	d := mustSmallDemo(t)
	ctx := context.Background()
	// The demo library has these secrets set: the test would pass for nothing
	// if they were empty.
	if err := d.Read(ctx, func(tx *db.Tx) error {
		var n int
		if err := tx.QueryRow(`SELECT (SELECT count(*) FROM staff_users WHERE password_hash <> '') * (SELECT count(*) FROM sip_accounts WHERE password_hash <> '') * (SELECT count(*) FROM patrons WHERE pin_hash <> '')`).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			t.Fatal("the demo library has no secrets to hide")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for name, q := range map[string]string{
		"StaffPassword": `SELECT username, password_hash FROM staff_users`,
		"SIPPassword":   `SELECT username, password_hash FROM sip_accounts`,
		"PatronPIN":     `SELECT card, pin_hash FROM patrons`,
		"PINInSubquery": `SELECT card, (SELECT p2.pin_hash FROM patrons p2 WHERE p2.id = p.id) FROM patrons p`,
		"StarStaff":     `SELECT * FROM staff_users`,
	} {
		t.Run(name, func(t *testing.T) {
			res, err := reports.RunSQL(ctx, d, q, nil, reports.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Rows) == 0 {
				t.Fatal("no rows")
			}
			for _, row := range res.Rows {
				if len(row) == 2 && row[1] != "" {
					t.Fatalf("the secret column reads %q, want it empty", row[1])
				}
				for _, cell := range row {
					if strings.HasPrefix(cell, "$2") || strings.Contains(cell, "$2a$") {
						t.Fatalf("a hash was read: %v", row)
					}
				}
			}
		})
	}
	t.Run("WhereCannotGuess", func(t *testing.T) {
		res, err := reports.RunSQL(ctx, d, `SELECT count(*) FROM staff_users WHERE password_hash LIKE '$2%'`, nil, reports.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		if res.Rows[0][0] != "0" {
			t.Errorf("%s staff users match a guess at their hash", res.Rows[0][0])
		}
	})
}

// TestRunSQLRefusesSessionsPagesAndServer: the sessions, the raw pages of the
// file, its page statistics and the PRAGMA tables (which name the server's file)
// are refused with a message that says so.
func TestRunSQLRefusesSessionsPagesAndServer(t *testing.T) {
	d := mustSmallDemo(t)
	ctx := context.Background()
	for name, c := range map[string]struct{ q, want string }{
		"Sessions":          {`SELECT token_hash, data FROM sessions`, "sessions"},
		"SessionsCount":     {`SELECT count(*) FROM sessions`, "sessions"},
		"OPACSessions":      {`SELECT data FROM opac_sessions`, "opac_sessions"},
		"DBPage":            {`SELECT * FROM sqlite_dbpage`, "raw pages"},
		"DBStat":            {`SELECT * FROM dbstat`, "dbstat"},
		"DatabaseList":      {`SELECT file FROM pragma_database_list`, "PRAGMA"},
		"DatabaseListCall":  {`SELECT * FROM pragma_database_list()`, "PRAGMA"},
		"TableInfoInSelect": {`SELECT (SELECT group_concat(name) FROM pragma_table_info('staff_users'))`, "PRAGMA"},
	} {
		t.Run(name, func(t *testing.T) {
			res, err := reports.RunSQL(ctx, d, c.q, nil, reports.Limits{})
			if err == nil {
				t.Fatalf("ran: %v", res.Rows)
			}
			if stacks.ErrorCode(err) != stacks.EINVALID || !strings.Contains(stacks.ErrorMessage(err), c.want) {
				t.Errorf("%v: want a refusal naming %q", err, c.want)
			}
			if strings.Contains(stacks.ErrorMessage(err), d.Path()) {
				t.Errorf("the message names the file: %v", err)
			}
		})
	}
	// Beside them, the schema stays readable: reports are written from it.
	if _, err := reports.RunSQL(ctx, d, `SELECT name FROM sqlite_schema WHERE type = 'table'`, nil, reports.Limits{}); err != nil {
		t.Errorf("the schema: %v", err)
	}
}

// TestRunSQLMemoryCaps: one value cannot grow past MaxSQLValueBytes, and the
// values read stop at the byte cap with a note that says so.
func TestRunSQLMemoryCaps(t *testing.T) {
	d := mustSmallDemo(t)
	ctx := context.Background()
	for _, q := range []string{
		`SELECT length(hex(randomblob(200000000)))`,
		`SELECT randomblob(900000000) FROM (VALUES(1),(2),(3),(4))`,
	} {
		_, err := reports.RunSQL(ctx, d, q, nil, reports.Limits{})
		if err == nil || !strings.Contains(stacks.ErrorMessage(err), "grew past 1024 KB") {
			t.Errorf("%s: %v, want the value length refused", q, err)
		}
	}
	// 40 rows of 600 KB (hex of 300,000 bytes): each under the value limit, 24 MB
	// in all, over the 20 MB cap.
	res, err := reports.RunSQL(ctx, d, `WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 40) SELECT x, printf('%.*c', 600000, 'x') FROM c`, nil, reports.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Truncated || len(res.Rows) >= 40 || len(res.Rows) < 30 || !strings.Contains(res.TruncatedNote, "20 MB") {
		t.Errorf("%d rows, truncated %v, note %q", len(res.Rows), res.Truncated, res.TruncatedNote)
	}
	// Under the cap, nothing is left out.
	res, err = reports.RunSQL(ctx, d, `WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 10) SELECT x, printf('%.*c', 600000, 'x') FROM c`, nil, reports.Limits{})
	if err != nil || res.Truncated || len(res.Rows) != 10 {
		t.Errorf("%v: %d rows, truncated %v", err, len(res.Rows), res.Truncated)
	}
}

// TestRunSQLParamKeepsLeadingZeros: a value with leading zeros (a barcode) is
// passed as text, spelled as typed; a plain whole number is still a number.
func TestRunSQLParamKeepsLeadingZeros(t *testing.T) {
	d := mustSmallDemo(t)
	ctx := context.Background()
	for _, c := range []struct{ v, want string }{
		{"0012345", "text 0012345"},
		{"12345", "integer 12345"},
		{"-7", "integer -7"},
		{"+5", "text +5"},
		{"007", "text 007"},
		{"0", "integer 0"},
	} {
		res, err := reports.RunSQL(ctx, d, `SELECT typeof(:b) || ' ' || :b`, map[string]string{"b": c.v}, reports.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Rows[0][0]; got != c.want {
			t.Errorf("%q is passed as %q, want %q", c.v, got, c.want)
		}
	}
}
