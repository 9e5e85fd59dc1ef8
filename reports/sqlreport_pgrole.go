package reports

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/stacks-ils/stacks"
)

// The role SQL reports run as on PostgreSQL. The server checks every read of a
// report against this role's privileges: SELECT on the library's tables, but on
// the tables with secrets only the columns that are not secret (column
// privileges), and nothing at all on the sessions. PostgreSQL's own views
// follow the same privileges: pg_stats shows only the columns the role may
// select, pg_stat_activity hides the query and address of every session that is
// not the role's, and the server's files and settings need roles it is not
// granted.
//
// A report runs inside a SECURITY DEFINER function owned by this role
// (<role>.run): the function's owner, not the connection's, is the user every
// statement of the report runs as, including SQL that a function runs from a
// string (ts_rewrite, query_to_xml, cursor_to_xml), and inside such a function
// PostgreSQL refuses to change the role (set_config('role', ...), SET ROLE), so
// a report cannot step back to the server's own role. The plan check of
// sqlreport_postgres.go stays in front, for clear messages and for what is not
// about secrets (advisory locks, sleeping); the secrets do not rest on it.

// PostgresRole is the name of the role SQL reports run as on PostgreSQL
// (STACKS_REPORTS_ROLE); a schema of the same name holds its functions.
var PostgresRole = "stacks_reports"

// secretColumn matches the names of columns a report never reads, whatever
// their table: password and PIN hashes, tokens, secrets.
var secretColumn = regexp.MustCompile(`(^|_)(hash|password|secret|token)(_|$)`)

// isSecretColumn says whether a report may not read column col of table.
func isSecretColumn(table, col string) bool {
	return hiddenColumns[table][col] || secretColumn.MatchString(col)
}

// pgRoleReady remembers the databases (by URL and role) whose report role is
// set up by this process.
var pgRoleReady sync.Map

// ErrReportRole is the error of a PostgreSQL database whose report role could
// not be set up: its message says what an administrator runs.
type ErrReportRole struct {
	Role, Owner, Cause string
}

func (e *ErrReportRole) Error() string {
	return fmt.Sprintf("SQL reports on PostgreSQL run as the role %q, which this server's role %q cannot set up (%s). "+
		"Ask an administrator of the PostgreSQL server to run, once: CREATE ROLE %s NOLOGIN; GRANT %s TO %s; "+
		"then start Stacks again (it grants the role what it may read). Until then SQL reports do not run; the other reports do.",
		e.Role, e.Owner, e.Cause, pgx.Identifier{e.Role}.Sanitize(), pgx.Identifier{e.Role}.Sanitize(), pgx.Identifier{e.Owner}.Sanitize())
}

// SetUpPostgresRole creates the report role when the server's role may create
// roles, and grants it what a report may read: SELECT on the columns of the
// library's tables that are not secret, nothing on the sessions. It runs at
// startup, and again before the first report of a process; a server whose role
// cannot create roles gets an *ErrReportRole saying what to run. A no-op on
// SQLite (url is a file).
func SetUpPostgresRole(ctx context.Context, url string) error {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return fmt.Errorf("report role: %v", err)
	}
	cfg.RuntimeParams["application_name"] = "stacks report role"
	cfg.DefaultQueryExecMode = pgx.QueryExecModeExec
	c, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("report role: %w", err)
	}
	defer c.Close(ctx)
	role := PostgresRole
	var owner string
	if err := c.QueryRow(ctx, `SELECT current_user`).Scan(&owner); err != nil {
		return fmt.Errorf("report role: %w", err)
	}
	// Roles are the cluster's, shared by every database: another server (or
	// test) may create or grant the same role at the same moment.
	for attempt := 0; ; attempt++ {
		err = ensureRole(ctx, c, role, owner)
		if err == nil || attempt == 3 || !pgRetryable(err) {
			break
		}
	}
	if err != nil {
		return err
	}
	if err := grantReportRole(ctx, c, role); err != nil {
		return fmt.Errorf("report role %s: %w", role, err)
	}
	pgRoleReady.Store(role+"\x00"+url, true)
	return nil
}

// pgRetryable says whether err is a race with another session on the
// cluster's shared catalogues.
func pgRetryable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "23505" || pe.Code == "42710" || pe.Code == "40001" || pe.Code == "XX000")
}

// ensureRole creates role if it is missing, makes owner a member (so that it
// can give the role its functions), and checks that the role can read no more
// than it is granted.
func ensureRole(ctx context.Context, c *pgx.Conn, role, owner string) error {
	id := pgx.Identifier{role}.Sanitize()
	var exists bool
	if err := c.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1)`, role).Scan(&exists); err != nil {
		return fmt.Errorf("report role: %w", err)
	}
	if !exists {
		if _, err := c.Exec(ctx, `CREATE ROLE `+id+` NOLOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOBYPASSRLS`); err != nil {
			if pgRetryable(err) {
				return err
			}
			return &ErrReportRole{Role: role, Owner: owner, Cause: pgMessage(err)}
		}
	}
	var member bool
	if err := c.QueryRow(ctx, `SELECT pg_has_role(current_user, $1, 'MEMBER')`, role).Scan(&member); err != nil {
		return fmt.Errorf("report role: %w", err)
	}
	if !member {
		if _, err := c.Exec(ctx, `GRANT `+id+` TO `+pgx.Identifier{owner}.Sanitize()); err != nil {
			if pgRetryable(err) {
				return err
			}
			return &ErrReportRole{Role: role, Owner: owner, Cause: pgMessage(err)}
		}
	}
	// A role that is a superuser, reads all data or statistics, or holds the
	// server's own role's privileges would read the secrets whatever it is
	// granted here.
	var why string
	err := c.QueryRow(ctx, `SELECT CASE
		WHEN r.rolsuper THEN 'it is a superuser'
		WHEN r.rolbypassrls THEN 'it bypasses row security'
		WHEN pg_has_role(r.oid, session_user, 'USAGE') THEN 'it holds the privileges of ' || session_user
		WHEN pg_has_role(r.oid, 'pg_read_all_data', 'USAGE') THEN 'it is a member of pg_read_all_data'
		WHEN pg_has_role(r.oid, 'pg_read_all_stats', 'USAGE') THEN 'it is a member of pg_read_all_stats'
		WHEN pg_has_role(r.oid, 'pg_read_server_files', 'USAGE') THEN 'it is a member of pg_read_server_files'
		ELSE '' END FROM pg_roles r WHERE r.rolname = $1`, role).Scan(&why)
	if err != nil {
		return fmt.Errorf("report role: %w", err)
	}
	if why != "" {
		return stacks.Errorf(stacks.EINVALID, "SQL reports on PostgreSQL run as the role %q, and %s: it could read the passwords and PINs. Give reports a role of their own (STACKS_REPORTS_ROLE) or revoke that from %s.", role, why, role)
	}
	return nil
}

// grantReportRole gives role, in the current database, SELECT on the columns
// of the library's tables that are not secret and nothing on the sessions, and
// the functions a report runs through; all in one transaction, one server at a
// time.
func grantReportRole(ctx context.Context, c *pgx.Conn, role string) error {
	id := pgx.Identifier{role}.Sanitize()
	tx, err := c.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	// One server of this database at a time (the key spells "report").
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(125779119060084)`); err != nil {
		return err
	}
	// Views are left out: a view reads with its owner's privileges, so one
	// that read a secret would hand it over. So is a SECURITY DEFINER
	// function of the library's, which would run as its owner.
	var definer string
	if err := tx.QueryRow(ctx, `SELECT coalesce(string_agg(p.oid::regprocedure::text, ', '), '')
		FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
		WHERE n.nspname = current_schema() AND p.prosecdef AND has_function_privilege($1, p.oid, 'EXECUTE')`, role).Scan(&definer); err != nil {
		return err
	}
	if definer != "" {
		return stacks.Errorf(stacks.EINVALID, "the function %s runs as its owner (SECURITY DEFINER) and the report role may call it: revoke EXECUTE on it from PUBLIC, or make it SECURITY INVOKER", definer)
	}
	rows, err := tx.Query(ctx, `SELECT c.relname, a.attname
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
		WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p', 'f')
		ORDER BY c.relname, a.attnum`)
	if err != nil {
		return err
	}
	cols := map[string][]string{}
	for rows.Next() {
		var t, col string
		if err := rows.Scan(&t, &col); err != nil {
			return err
		}
		if _, ok := cols[t]; !ok {
			cols[t] = nil
		}
		if !isSecretColumn(t, col) {
			cols[t] = append(cols[t], pgx.Identifier{col}.Sanitize())
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	tables := make([]string, 0, len(cols))
	for t := range cols {
		tables = append(tables, t)
	}
	sort.Strings(tables)
	var b strings.Builder
	var schema string
	if err := tx.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		return err
	}
	fmt.Fprintf(&b, "GRANT USAGE ON SCHEMA %s TO %s;\n", pgx.Identifier{schema}.Sanitize(), id)
	for _, t := range tables {
		tid := pgx.Identifier{schema, t}.Sanitize()
		// Revoking the table's privilege revokes its columns' too, so a
		// column that became secret loses what it had.
		fmt.Fprintf(&b, "REVOKE ALL ON %s FROM %s;\n", tid, id)
		if _, denied := deniedTables[t]; denied || len(cols[t]) == 0 {
			continue
		}
		fmt.Fprintf(&b, "GRANT SELECT (%s) ON %s TO %s;\n", strings.Join(cols[t], ", "), tid, id)
	}
	// The schema is the role's (a restored backup may have given it to whoever
	// restored it), so that the role may own its functions.
	fmt.Fprintf(&b, "CREATE SCHEMA IF NOT EXISTS %[1]s AUTHORIZATION %[1]s;\nALTER SCHEMA %[1]s OWNER TO %[1]s;\n", id)
	fmt.Fprintf(&b, "REVOKE ALL ON SCHEMA %[1]s FROM PUBLIC;\n", id)
	// run reads at most max_rows rows of the report as JSON objects (one a
	// row, its columns in order); plan is its EXPLAIN. Both run as the role.
	fmt.Fprintf(&b, `CREATE OR REPLACE FUNCTION %[1]s.run(q text, max_rows bigint) RETURNS SETOF json
LANGUAGE plpgsql SECURITY DEFINER AS $run$
BEGIN
	RETURN QUERY EXECUTE 'SELECT row_to_json(r) FROM (' || q || E'\n) r LIMIT ' || max_rows;
END
$run$;
CREATE OR REPLACE FUNCTION %[1]s.plan(q text) RETURNS text
LANGUAGE plpgsql SECURITY DEFINER AS $plan$
DECLARE p text;
BEGIN
	EXECUTE 'EXPLAIN (VERBOSE, FORMAT JSON) ' || q INTO p;
	RETURN p;
END
$plan$;
ALTER FUNCTION %[1]s.run(text, bigint) OWNER TO %[1]s;
ALTER FUNCTION %[1]s.plan(text) OWNER TO %[1]s;
REVOKE ALL ON FUNCTION %[1]s.run(text, bigint), %[1]s.plan(text) FROM PUBLIC;
`, id)
	if _, err := tx.Exec(ctx, b.String()); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// pgMessage is the server's message in err.
func pgMessage(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Message
	}
	return err.Error()
}

// readyPostgresRole sets up the report role once per database and role in
// this process.
func readyPostgresRole(ctx context.Context, url string) error {
	key := PostgresRole + "\x00" + url
	if _, ok := pgRoleReady.Load(key); ok {
		return nil
	}
	if err := SetUpPostgresRole(ctx, url); err != nil {
		var re *ErrReportRole
		if errors.As(err, &re) {
			return stacks.Errorf(stacks.EINVALID, "%s", re.Error())
		}
		msg := pgMessage(err)
		var se *stacks.Error
		if errors.As(err, &se) {
			msg = se.Message
		}
		return stacks.Errorf(stacks.EINVALID, "SQL reports cannot run: setting up their role %q failed (%s).", PostgresRole, msg)
	}
	return nil
}
