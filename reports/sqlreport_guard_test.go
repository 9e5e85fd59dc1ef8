package reports_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/dbtest"
	"github.com/stacks-ils/stacks/reports"
)

// TestRunSQLHidesSecrets: the password and PIN hashes are never read. The
// guarantee is engine-specific in its form: on SQLite they read as empty (the
// rows still come), everywhere in the statement, so a WHERE cannot guess them;
// on PostgreSQL (the counterpart) a statement whose plan reads one, or the whole
// row of its table, is refused with a message that says why.
func TestRunSQLHidesSecrets(t *testing.T) {
	pg := dbtest.Engine() == db.Postgres
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
			if pg {
				wantSecretRefused(t, err)
				return
			}
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
		if pg {
			wantSecretRefused(t, err)
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if res.Rows[0][0] != "0" {
			t.Errorf("%s staff users match a guess at their hash", res.Rows[0][0])
		}
	})
}

// wantSecretRefused checks PostgreSQL's refusal of a report reading a secret.
func wantSecretRefused(t *testing.T, err error) {
	t.Helper()
	if stacks.ErrorCode(err) != stacks.EINVALID || !strings.Contains(stacks.ErrorMessage(err), "passwords and PINs") {
		t.Errorf("%v: want the secret column refused", err)
	}
	if err != nil && strings.Contains(err.Error(), "$2") {
		t.Errorf("the message holds a hash: %v", err)
	}
}

// TestRunSQLRefusesSessionsPagesAndServer: the sessions, and what describes the
// server rather than the library, are refused with a message that says so. The
// server's part is engine-specific: on SQLite the raw pages of the file, its
// page statistics and the PRAGMA tables (which name the server's file); on
// PostgreSQL (the counterpart) the server's files, settings, sessions and
// functions that sleep, reach other databases, change settings or run SQL from
// a string.
func TestRunSQLRefusesSessionsPagesAndServer(t *testing.T) {
	d := mustSmallDemo(t)
	ctx := context.Background()
	cases := map[string]struct{ q, want string }{
		"Sessions":          {`SELECT token_hash, data FROM sessions`, "sessions"},
		"SessionsCount":     {`SELECT count(*) FROM sessions`, "sessions"},
		"OPACSessions":      {`SELECT data FROM opac_sessions`, "opac_sessions"},
		"DBPage":            {`SELECT * FROM sqlite_dbpage`, "raw pages"},
		"DBStat":            {`SELECT * FROM dbstat`, "dbstat"},
		"DatabaseList":      {`SELECT file FROM pragma_database_list`, "PRAGMA"},
		"DatabaseListCall":  {`SELECT * FROM pragma_database_list()`, "PRAGMA"},
		"TableInfoInSelect": {`SELECT (SELECT group_concat(name) FROM pragma_table_info('staff_users'))`, "PRAGMA"},
	}
	schema := `SELECT name FROM sqlite_schema WHERE type = 'table'`
	if dbtest.Engine() == db.Postgres {
		cases = map[string]struct{ q, want string }{
			"Sessions":       {`SELECT token_hash, data FROM sessions`, "sessions"},
			"SessionsCount":  {`SELECT count(*) FROM sessions`, "sessions"},
			"SessionsInCTE":  {`WITH s AS (SELECT * FROM sessions) SELECT count(*) FROM s`, "sessions"},
			"OPACSessions":   {`SELECT data FROM opac_sessions`, "opac_sessions"},
			"ReadFile":       {`SELECT pg_read_file('postgresql.conf')`, "pg_read_file"},
			"ReadBinaryFile": {`SELECT pg_read_binary_file('PG_VERSION')`, "pg_read_binary_file"},
			"ListDir":        {`SELECT * FROM pg_ls_dir('.')`, "pg_ls_dir"},
			"Settings":       {`SELECT setting FROM pg_settings WHERE name = 'data_directory'`, "settings"},
			"CurrentSetting": {`SELECT current_setting('data_directory')`, "current_setting"},
			"SetConfig":      {`SELECT set_config('statement_timeout', '0', false)`, "set_config"},
			"Activity":       {`SELECT query FROM pg_stat_activity`, "activity"},
			"BackendQuery":   {`SELECT pg_stat_get_backend_activity(s) FROM pg_stat_get_backend_idset() s`, "pg_stat_get_backend_"},
			"Sleep":          {`SELECT pg_sleep(0.1)`, "pg_sleep"},
			"QueryToXML":     {`SELECT query_to_xml('SELECT pin_hash FROM patrons', true, false, '')`, "query_to_xml"},
			"DBLink":         {`SELECT dblink('dbname=postgres', 'SELECT 1')`, "dblink"},
			"AdvisoryLock":   {`SELECT pg_advisory_lock(1)`, "pg_advisory_lock"},
			"LargeObject":    {`SELECT lo_import('/etc/passwd')`, "lo_import"},
		}
		schema = `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()`
	}
	for name, c := range cases {
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
	if _, err := reports.RunSQL(ctx, d, schema, nil, reports.Limits{}); err != nil {
		t.Errorf("the schema: %v", err)
	}
}

// TestRunSQLMemoryCaps: one value cannot grow past MaxSQLValueBytes, and the
// values read stop at the byte cap with a note that says so. The statements are
// engine-specific (randomblob, printf; PostgreSQL's counterpart repeat and
// generate_series), and so is the first cap: SQLite's limit on the length of a
// value; on PostgreSQL, which builds values in the server, a row longer than
// the cap is refused before it is read into this process.
//
// The time limit is raised far from what these statements take (under a
// second on a quiet machine, seconds under the race detector): the test is of the
// memory caps, and a loaded machine must not turn it into one of the timeout.
func TestRunSQLMemoryCaps(t *testing.T) {
	d := mustSmallDemo(t)
	ctx := context.Background()
	lim := reports.Limits{Timeout: 2 * time.Minute}
	big := []string{
		`SELECT length(hex(randomblob(200000000)))`,
		`SELECT randomblob(900000000) FROM (VALUES(1),(2),(3),(4))`,
	}
	rows40 := `WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 40) SELECT x, printf('%.*c', 600000, 'x') FROM c`
	rows10 := `WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 10) SELECT x, printf('%.*c', 600000, 'x') FROM c`
	if dbtest.Engine() == db.Postgres {
		big = []string{
			`SELECT repeat('x', 2000000)`,
			`SELECT x, repeat('x', 3000000) FROM generate_series(1, 4) AS x`,
		}
		rows40 = `SELECT x, repeat('x', 600000) FROM generate_series(1, 40) AS x`
		rows10 = `SELECT x, repeat('x', 600000) FROM generate_series(1, 10) AS x`
	}
	for _, q := range big {
		_, err := reports.RunSQL(ctx, d, q, nil, lim)
		if err == nil || !strings.Contains(stacks.ErrorMessage(err), "grew past 1024 KB") {
			t.Errorf("%s: %v, want the value length refused", q, err)
		}
	}
	// 40 rows of 600 KB (hex of 300,000 bytes): each under the value limit, 24 MB
	// in all, over the 20 MB cap.
	res, err := reports.RunSQL(ctx, d, rows40, nil, lim)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Truncated || len(res.Rows) >= 40 || len(res.Rows) < 30 || !strings.Contains(res.TruncatedNote, "20 MB") {
		t.Errorf("%d rows, truncated %v, note %q", len(res.Rows), res.Truncated, res.TruncatedNote)
	}
	// Under the cap, nothing is left out.
	res, err = reports.RunSQL(ctx, d, rows10, nil, lim)
	if err != nil || res.Truncated || len(res.Rows) != 10 {
		t.Errorf("%v: %d rows, truncated %v", err, len(res.Rows), res.Truncated)
	}
}

// TestRunSQLParamKeepsLeadingZeros: a value with leading zeros (a barcode) is
// passed as text, spelled as typed; a plain whole number is still a number. The
// statement is engine-specific: SQLite's typeof says what a value was bound
// as; on PostgreSQL (the counterpart) every value goes as text and the server
// reads it as its place needs, so the test reads it back as text and as a
// number.
func TestRunSQLParamKeepsLeadingZeros(t *testing.T) {
	d := mustSmallDemo(t)
	ctx := context.Background()
	if dbtest.Engine() == db.Postgres {
		for _, c := range []struct{ q, v, want string }{
			{`SELECT CAST(:b AS text)`, "0012345", "0012345"},
			{`SELECT CAST(:b AS text)`, "+5", "+5"},
			{`SELECT CAST(:b AS text)`, "007", "007"},
			{`SELECT :b + 1`, "12345", "12346"},
			{`SELECT :b + 1`, "-7", "-6"},
			{`SELECT count(*) FROM branches WHERE id = :b`, "1", "1"},
			{`SELECT count(*) FROM items WHERE barcode = :b`, "0012345", "0"},
		} {
			res, err := reports.RunSQL(ctx, d, c.q, map[string]string{"b": c.v}, reports.Limits{})
			if err != nil {
				t.Fatalf("%s with %q: %v", c.q, c.v, err)
			}
			if got := res.Rows[0][0]; got != c.want {
				t.Errorf("%s with %q: %q, want %q", c.q, c.v, got, c.want)
			}
		}
		return
	}
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
