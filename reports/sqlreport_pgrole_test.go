package reports_test

import (
	"context"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/dbtest"
	"github.com/stacks-ils/stacks/demo"
	"github.com/stacks-ils/stacks/demo/demotest"
	"github.com/stacks-ils/stacks/reports"
)

// secretSelects are the SELECTs of each kind of secret a report may not read.
var secretSelects = map[string]string{
	"staff password":  `SELECT password_hash FROM staff_users`,
	"patron PIN":      `SELECT pin_hash FROM patrons`,
	"SIP password":    `SELECT password_hash FROM sip_accounts`,
	"session data":    `SELECT encode(data, 'escape') FROM sessions`,
	"session token":   `SELECT token_hash FROM sessions`,
	"catalogue token": `SELECT token_hash FROM opac_sessions`,
}

// pgSecrets reads, as the server's own role, every secret of the library (a
// session and a catalogue session are added, with a marker in their data), and
// a query text left in pg_stat_activity by another session, which stays open
// until the test ends.
func pgSecrets(t *testing.T, ctx context.Context, dbURL string) []string {
	t.Helper()
	c, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	for _, q := range []string{
		`INSERT INTO sessions (token_hash, data, expiry) VALUES ('tok-staff-secret-0001', 'session-data-secret-0001', '2999-01-01T00:00:00Z')`,
		`INSERT INTO opac_sessions (token_hash, data, expiry) VALUES ('tok-opac-secret-0002', 'session-data-secret-0002', '2999-01-01T00:00:00Z')`,
		`ANALYZE`,
	} {
		if _, err := c.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	var secrets []string
	rows, err := c.Query(ctx, `SELECT password_hash FROM staff_users UNION ALL SELECT pin_hash FROM patrons
		UNION ALL SELECT password_hash FROM sip_accounts UNION ALL SELECT token_hash FROM sessions
		UNION ALL SELECT token_hash FROM opac_sessions UNION ALL SELECT encode(data, 'escape') FROM sessions
		UNION ALL SELECT encode(data, 'escape') FROM opac_sessions`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		if s != "" {
			secrets = append(secrets, s)
		}
	}
	if rows.Err() != nil || len(secrets) < 8 {
		t.Fatalf("%v: %d secrets; the test would pass for nothing", rows.Err(), len(secrets))
	}
	// ANALYZE ran: pg_stats holds the hashes, for the server's own role.
	var n int
	if err := c.QueryRow(ctx, `SELECT count(*) FROM pg_stats WHERE schemaname = current_schema() AND attname IN ('password_hash', 'pin_hash', 'token_hash', 'data')`).Scan(&n); err != nil || n == 0 {
		t.Fatalf("%v: pg_stats has no statistics of the secret columns; the test would pass for nothing", err)
	}
	// Another session's last query stays in pg_stat_activity while it is idle.
	idle, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { idle.Close(context.Background()) })
	var marker string
	if err := idle.QueryRow(ctx, `SELECT 'activity-secret-' || 'marker-0003'`).Scan(&marker); err != nil {
		t.Fatal(err)
	}
	if err := c.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%activity-secret-%'`).Scan(&n); err != nil || n == 0 {
		t.Fatalf("%v: the other session's query is not in pg_stat_activity; the test would pass for nothing", err)
	}
	return append(secrets, "activity-secret-marker-0003")
}

// wantNoSecret fails t if the report's rows or its error hold a secret.
func wantNoSecret(t *testing.T, q string, res reports.Result, err error, secrets []string) {
	t.Helper()
	var all strings.Builder
	for _, row := range res.Rows {
		all.WriteString(strings.Join(row, "\x00"))
	}
	if err != nil {
		all.WriteString(err.Error())
	}
	got := all.String()
	for _, s := range secrets {
		// A hash may come back split into a tsquery's lexemes: its longest
		// piece between $ signs gives it away as well.
		pieces := append(strings.Split(s, "$"), s)
		for _, p := range pieces {
			if len(p) >= 16 && strings.Contains(got, p) {
				t.Errorf("%s\nread a secret (%q): %.300s", q, p, got)
				return
			}
		}
	}
}

// TestPostgresReportsCannotReadSecrets: on PostgreSQL the reports run as a role
// that cannot read the password, PIN and session secrets, the statistics of
// their columns or other sessions' queries, whatever function runs the SQL:
// the payloads that read them (a SELECT given to ts_rewrite or query_to_xml as
// a string, pg_stats, pg_stat_activity, the sessions) are checked with the plan
// check on (as the server runs) and off (the role alone), and so is every
// function of the catalogue that takes text and may run it as SQL, each given a
// SELECT of each secret. On SQLite the same guarantee is the authorizer's
// (TestRunSQLHidesSecrets); here the SQLite run reads each secret's SELECT and
// finds it empty.
func TestPostgresReportsCannotReadSecrets(t *testing.T) {
	ctx := context.Background()
	d := mustSmallDemo(t)
	if dbtest.Engine() != db.Postgres {
		for what, q := range secretSelects {
			if strings.Contains(q, "sessions") {
				continue // refused: TestRunSQLRefusesSessionsPagesAndServer
			}
			res, err := reports.RunSQL(ctx, d, q, nil, reports.Limits{})
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			for _, row := range res.Rows {
				if row[0] != "" {
					t.Fatalf("%s reads %q", what, row[0])
				}
			}
		}
		return
	}
	secrets := pgSecrets(t, ctx, d.Path())
	payloads := []string{
		`SELECT ts_rewrite('x'::tsquery, 'SELECT ''x''::tsquery, quote_literal(password_hash)::tsquery FROM staff_users LIMIT 1')::text`,
		`SELECT ts_rewrite('x'::tsquery, 'SELECT ''x''::tsquery, quote_literal(pin_hash)::tsquery FROM patrons WHERE pin_hash <> '''' LIMIT 1')::text`,
		`SELECT ts_rewrite('x'::tsquery, 'SELECT ''x''::tsquery, quote_literal(password_hash)::tsquery FROM sip_accounts LIMIT 1')::text`,
		`SELECT ts_rewrite('x'::tsquery, 'SELECT ''x''::tsquery, quote_literal(encode(data, ''escape''))::tsquery FROM sessions LIMIT 1')::text`,
		`SELECT query_to_xml('SELECT password_hash, pin_hash FROM staff_users, patrons', true, false, '')::text`,
		`SELECT query_to_xml('SELECT token_hash, data FROM sessions', true, false, '')::text`,
		// Stepping back to the server's role first, in the statement or in SQL run from a string.
		`SELECT set_config('role', 'none', false), query_to_xml('SELECT password_hash FROM staff_users', true, false, '')::text`,
		`SELECT query_to_xml('SELECT set_config(''role'', ''none'', true)', true, false, '')::text || query_to_xml('SELECT pin_hash FROM patrons', true, false, '')::text`,
		`SELECT tablename, attname, most_common_vals::text, histogram_bounds::text FROM pg_stats WHERE schemaname = current_schema()`,
		`SELECT usename, query, client_addr::text FROM pg_stat_activity`,
		`SELECT pg_stat_get_backend_activity(s) FROM pg_stat_get_backend_idset() s`,
		`SELECT token_hash, encode(data, 'escape') FROM sessions`,
		`SELECT * FROM staff_users`,
		`SELECT p::text FROM patrons p`,
		`SELECT pg_read_file('pg_hba.conf')`,
	}
	for _, plans := range []string{"WithPlanCheck", "RoleAlone"} {
		t.Run(plans, func(t *testing.T) {
			if plans == "RoleAlone" {
				reports.SkipPlanCheck(t)
			}
			for _, q := range payloads {
				res, err := reports.RunSQL(ctx, d, q, nil, reports.Limits{})
				wantNoSecret(t, q, res, err, secrets)
			}
		})
	}
	// pg_stats answers, with the columns the role may read and no others.
	reports.SkipPlanCheck(t)
	res, err := reports.RunSQL(ctx, d, `SELECT tablename || '.' || attname FROM pg_stats WHERE schemaname = current_schema() ORDER BY 1`, nil, reports.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	var cols []string
	for _, row := range res.Rows {
		cols = append(cols, row[0])
	}
	if !strings.Contains(strings.Join(cols, " "), "items.barcode") {
		t.Errorf("pg_stats shows the role %v, want the columns it may read (items.barcode)", cols)
	}
	for _, c := range cols {
		if regexp.MustCompile(`hash|^sessions\.|^opac_sessions\.`).MatchString(c) {
			t.Errorf("pg_stats shows the role %s", c)
		}
	}

	// The catalogue's functions that take text and may run it as SQL: those
	// written in SQL or PL/pgSQL (EXECUTE), and the built-in ones whose C
	// function or argument names say query, SQL or cursor. Each is called with
	// a SELECT of each secret as every text argument.
	rows, err := pgx.Connect(ctx, d.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close(ctx)
	found, err := pgx.CollectRows(must(rows.Query(ctx, pgSQLTextFunctions)), pgx.RowToStructByPos[pgFunc])
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range found {
		names = append(names, f.Signature)
	}
	t.Logf("%d functions take text that may be SQL: %s", len(found), strings.Join(names, ", "))
	for _, want := range []string{"query_to_xml(text,boolean,boolean,text)", "ts_rewrite(tsquery,text)", "ts_stat(text)"} {
		if !strings.Contains(strings.Join(names, " "), want) {
			t.Errorf("the search of the catalogue misses %s", want)
		}
	}
	for _, f := range found {
		for what, sel := range secretSelects {
			args := make([]string, len(f.Args))
			for i, a := range f.Args {
				args[i] = pgArg(a, sel)
			}
			call := fmt.Sprintf("%s(%s)", f.Call, strings.Join(args, ", "))
			q := "SELECT " + call + "::text"
			if f.SetOf {
				q = "SELECT x::text FROM " + call + " AS x"
			}
			res, err := reports.RunSQL(ctx, d, q, nil, reports.Limits{MaxRows: 50})
			wantNoSecret(t, what+": "+q, res, err, secrets)
		}
	}
}

// pgSQLTextFunctions finds the functions of the catalogue that take a text
// argument and may run it as SQL, whose other arguments a test can give.
const pgSQLTextFunctions = `
SELECT p.oid::regprocedure::text,
	quote_ident(n.nspname) || '.' || quote_ident(p.proname),
	array(SELECT format_type(t, NULL) FROM unnest(p.proargtypes) AS t),
	p.proretset
FROM pg_proc p
JOIN pg_namespace n ON n.oid = p.pronamespace
JOIN pg_language l ON l.oid = p.prolang
WHERE p.prokind = 'f'
	AND 'text'::regtype = ANY (p.proargtypes)
	AND (l.lanname NOT IN ('internal', 'c')
		OR p.prosrc ~* '(query|sql|exec|cursor)'
		OR array_to_string(p.proargnames, ' ') ~* '(query|sql|select|cursor)')
	AND p.proargtypes::regtype[] <@ ARRAY['text', 'boolean', 'integer', 'bigint', 'tsquery', 'regconfig', 'oid', 'name']::regtype[]
ORDER BY 1`

// pgFunc is a row of pgSQLTextFunctions.
type pgFunc struct {
	Signature string
	Call      string
	Args      []string
	SetOf     bool
}

// pgArg is an argument of type typ for a call: the SELECT of a secret where
// the function takes text.
func pgArg(typ, sel string) string {
	switch typ {
	case "text", "name":
		return "'" + strings.ReplaceAll(sel, "'", "''") + "'::" + typ
	case "boolean":
		return "true"
	case "tsquery":
		return "'x'::tsquery"
	case "regconfig":
		return "'simple'::regconfig"
	default:
		return "1"
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestPostgresReportRoleSetUp: on a database owned by a role that is not a
// superuser and may not create roles (as many hosted servers give), SQL reports
// do not run, with a message that says what an administrator runs; once that
// is run, they run, as the report role, and still cannot read the secrets.
func TestPostgresReportRoleSetUp(t *testing.T) {
	if dbtest.Engine() != db.Postgres {
		t.Skip("the report role is PostgreSQL's; on SQLite the authorizer holds (TestRunSQLHidesSecrets)")
	}
	ctx := context.Background()
	adminURL := demotest.Path(t, demo.Options{Titles: 50, Patrons: 20}, demoNow)
	admin, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		t.Fatal(err)
	}
	suffix := strings.ToLower(strings.ReplaceAll(t.Name(), "/", "_"))[:20] + fmt.Sprint(admin.PgConn().PID())
	owner, role := "owner_"+suffix, "reports_"+suffix
	var dbname string
	if err := admin.QueryRow(ctx, `SELECT current_database()`).Scan(&dbname); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`CREATE ROLE ` + owner + ` LOGIN NOSUPERUSER NOCREATEROLE`,
		`ALTER DATABASE ` + pgx.Identifier{dbname}.Sanitize() + ` OWNER TO ` + owner,
		`DO $$ DECLARE r record; BEGIN
			FOR r IN SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
				WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p', 'v', 'm') LOOP
				EXECUTE format('ALTER TABLE %I OWNER TO ` + owner + `', r.relname);
			END LOOP; END $$`,
	} {
		if _, err := admin.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	// Roles are the cluster's: drop them (the database goes with the test).
	t.Cleanup(func() {
		ctx := context.Background()
		defer admin.Close(ctx)
		for _, q := range []string{`REASSIGN OWNED BY ` + owner + `, ` + role + ` TO CURRENT_USER`, `DROP OWNED BY ` + owner + `, ` + role, `DROP ROLE ` + role, `DROP ROLE ` + owner} {
			if _, err := admin.Exec(ctx, q); err != nil {
				t.Errorf("%s: %v", q, err)
			}
		}
	})
	u, err := url.Parse(adminURL)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.User(owner)
	d, err := db.Open(u.String(), db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	old := reports.PostgresRole
	reports.PostgresRole = role
	t.Cleanup(func() { reports.PostgresRole = old })

	_, err = reports.RunSQL(ctx, d, `SELECT count(*) FROM items`, nil, reports.Limits{})
	msg := stacks.ErrorMessage(err)
	m := regexp.MustCompile(`run, once: (CREATE ROLE .*?); then`).FindStringSubmatch(msg)
	if stacks.ErrorCode(err) != stacks.EINVALID || m == nil || !strings.Contains(msg, owner) {
		t.Fatalf("%v: want a message saying what to run", err)
	}
	t.Logf("%s", msg)
	// The administrator runs what the message says.
	for _, q := range strings.Split(m[1], "; ") {
		if _, err := admin.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	res, err := reports.RunSQL(ctx, d, `SELECT count(*) FROM items`, nil, reports.Limits{})
	if err != nil || res.Rows[0][0] == "0" {
		t.Fatalf("%v %v: the report does not run after the set-up", err, res.Rows)
	}
	secrets := pgSecrets(t, ctx, u.String())
	reports.SkipPlanCheck(t)
	for _, q := range []string{
		`SELECT ts_rewrite('x'::tsquery, 'SELECT ''x''::tsquery, quote_literal(password_hash)::tsquery FROM staff_users LIMIT 1')::text`,
		`SELECT query_to_xml('SELECT pin_hash FROM patrons', true, false, '')::text`,
		`SELECT usename, query FROM pg_stat_activity`,
		`SELECT attname, most_common_vals::text, histogram_bounds::text FROM pg_stats WHERE schemaname = current_schema()`,
	} {
		res, err := reports.RunSQL(ctx, d, q, nil, reports.Limits{})
		wantNoSecret(t, q, res, err, secrets)
	}
	var who string
	if err := admin.QueryRow(ctx, `SELECT r.rolname FROM pg_proc p JOIN pg_roles r ON r.oid = p.proowner WHERE p.proname = 'run' AND p.pronamespace = $1::regnamespace`, role).Scan(&who); err != nil || who != role {
		t.Errorf("the report function belongs to %q (%v), want %q", who, err, role)
	}
}
