package reports

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/stacks-ils/stacks"
)

// The SQL report guard on PostgreSQL. SQLite's guard is an authorizer on a
// query_only connection of the report's own (openReportConn); PostgreSQL has no
// authorizer, so the same guarantees come from these, on a connection of the
// report's own too (opened on the database's URL, closed after the run):
//
//   - CheckSQL first, as on SQLite: one SELECT, WITH or VALUES statement;
//   - the report role (sqlreport_pgrole.go): the statement runs inside a
//     SECURITY DEFINER function owned by a role that may select only the
//     columns that are not secret and nothing of the sessions, and cannot
//     change role there, so no function that runs SQL from a string
//     (ts_rewrite, query_to_xml) reads more than the role may; pg_stats and
//     pg_stat_activity show it only what its privileges allow;
//   - a READ ONLY transaction (and default_transaction_read_only on the
//     connection): the server refuses every write, nextval, SELECT FOR UPDATE;
//   - SET LOCAL statement_timeout: the server stops the statement at the limit;
//   - the plan, read first with EXPLAIN (VERBOSE, FORMAT JSON) as the role,
//     must not touch a refused relation (the sessions), a secret column
//     (hiddenColumns, or the whole row of their tables: p.* in the plan) or a
//     server function (deniedPgFunctions: files, sleep, settings, other
//     sessions, dblink, set_config, advisory locks, large objects). This check
//     gives the clear messages, and keeps out what privileges do not (an
//     advisory lock, a sleep); the secrets rest on the role, not on it;
//   - the row cap as on SQLite, and a cap on each row the server sends
//     (pgproto3's maximum message length, MaxSQLValueBytes): a value of
//     hundreds of megabytes is refused before it is read into this process.

// deniedPgRelations are the relations of PostgreSQL's own a report may not
// read: the server's settings and files, the other sessions and their queries.
var deniedPgRelations = map[string]string{
	"pg_settings":            "the server's settings",
	"pg_file_settings":       "the server's configuration files",
	"pg_hba_file_rules":      "the server's access rules",
	"pg_ident_file_mappings": "the server's user mappings",
	"pg_stat_activity":       "the server's sessions",
	"pg_authid":              "the server's roles",
	"pg_shadow":              "the server's roles",
	"pg_user_mappings":       "the server's user mappings",
}

// deniedPgFunctions are the prefixes of the names of the server functions a
// report may not call: they read the server's files or settings, sleep, signal
// or list other sessions, reach other databases, change settings, take locks,
// read or write large objects, or run SQL from a string, which the plan would
// not show (query_to_xml, ts_stat, ts_rewrite): the report role keeps the
// secrets from that SQL, and this list keeps it from locks and settings.
var deniedPgFunctions = []string{
	"pg_read_", "pg_ls_", "pg_stat_file", "pg_sleep", "pg_terminate_backend", "pg_cancel_backend",
	"pg_reload_conf", "pg_rotate_logfile", "pg_advisory", "pg_try_advisory", "pg_notify", "pg_logical_",
	"pg_replication_", "pg_create_", "pg_drop_", "pg_show_all_", "pg_stat_get_activity", "pg_stat_get_backend_", "pg_current_logfile",
	"pg_hba_file_rules", "pg_ident_file_mappings", "pg_file_", "pg_switch_wal", "pg_backup_", "pg_promote",
	"dblink", "set_config", "current_setting", "inet_server_", "inet_client_",
	"lo_", "loread", "lowrite", "query_to_xml", "table_to_xml", "cursor_to_xml", "schema_to_xml",
	"database_to_xml", "ts_stat", "ts_rewrite", "txid_current", "pg_current_xact_id",
}

// checkPlans turns the plan check off for the tests that prove the report
// role holds without it.
var checkPlans = true

// runOnPostgres checks and runs the report on a PostgreSQL connection of its
// own, as the report role (PostgresRole) through its function. q has the
// parameters' values written in as string constants (pgInline).
func runOnPostgres(ctx context.Context, url, q string, lim Limits) (Result, error) {
	if err := readyPostgresRole(ctx, url); err != nil {
		return Result{}, err
	}
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return Result{}, fmt.Errorf("report connection: %v", err)
	}
	cfg.RuntimeParams["application_name"] = "stacks sql report"
	cfg.RuntimeParams["default_transaction_read_only"] = "on"
	// No prepared statements kept: the connection runs one report.
	cfg.DefaultQueryExecMode = pgx.QueryExecModeExec
	c, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return Result{}, fmt.Errorf("report connection: %w", err)
	}
	defer c.Close(context.Background())
	// One row of the report is one message: none may pass the value cap
	// (and a little for the row's framing).
	c.PgConn().Frontend().SetMaxBodyLen(MaxSQLValueBytes + 1024)
	tx, err := c.BeginTx(ctx, pgx.TxOptions{AccessMode: pgx.ReadOnly})
	if err != nil {
		return Result{}, pgReportError(err)
	}
	defer tx.Rollback(context.Background())
	role := pgx.Identifier{PostgresRole}.Sanitize()
	// The server's own schemas, named: under the role, search_path's "$user"
	// would name the role's schema instead.
	var path string
	if err := tx.QueryRow(ctx, `SELECT coalesce(string_agg(quote_ident(s), ', '), 'pg_catalog') FROM unnest(current_schemas(false)) AS s`).Scan(&path); err != nil {
		return Result{}, pgReportError(err)
	}
	for _, set := range []string{
		"SET LOCAL search_path = " + path,
		fmt.Sprintf("SET LOCAL statement_timeout = %d", max(lim.Timeout.Milliseconds(), 1)),
		"SET LOCAL standard_conforming_strings = on",
		// The fixed statements below run as the role too; the report's own
		// SQL runs inside the role's function, where the role cannot change.
		"SET LOCAL ROLE " + role,
	} {
		if _, err := tx.Exec(ctx, set); err != nil {
			return Result{}, pgReportError(err)
		}
	}
	// The columns' names and types, read without running anything.
	desc, err := c.PgConn().Prepare(ctx, "", q, nil)
	if err != nil {
		return Result{}, pgReportError(err)
	}
	if checkPlans {
		var plan string
		if err := tx.QueryRow(ctx, "SELECT "+role+".plan($1)", q).Scan(&plan); err != nil {
			return Result{}, pgReportError(err)
		}
		if err := checkPgPlan(plan); err != nil {
			return Result{}, err
		}
	}
	// The function stops the report at one row past the cap (an endless
	// recursive query stops there, not at the time limit).
	rows, err := tx.Query(ctx, "SELECT "+role+".run($1, $2)::text", q, lim.MaxRows+1)
	if err != nil {
		return Result{}, pgReportError(err)
	}
	defer rows.Close()
	res, err := readPgRows(rows, desc.Fields, lim)
	if err != nil {
		return res, pgReportError(err)
	}
	return res, nil
}

// readPgRows reads the report's rows, each a JSON object of its columns in
// order, up to the row cap and the byte cap.
func readPgRows(rows pgx.Rows, fields []pgconn.FieldDescription, lim Limits) (Result, error) {
	var res Result
	numeric := make([]bool, len(fields))
	for i, f := range fields {
		res.Columns = append(res.Columns, Column{Name: f.Name})
		numeric[i] = pgNumericOIDs[f.DataTypeOID]
	}
	bytes := 0
	for rows.Next() {
		if len(res.Rows) == lim.MaxRows {
			res.Truncated = true
			res.TruncatedNote = fmt.Sprintf("The report has more rows than the cap of %d: narrow it.", lim.MaxRows)
			break
		}
		var obj string
		if err := rows.Scan(&obj); err != nil {
			return res, err
		}
		row, err := pgJSONRow(obj, fields)
		if err != nil {
			return res, err
		}
		size := 0
		for _, v := range row {
			size += len(v)
		}
		if bytes+size > lim.MaxBytes {
			res.Truncated = true
			res.TruncatedNote = fmt.Sprintf("The report's values passed %d MB after %d rows and the rest were left out: select fewer or shorter columns, or fewer rows.", lim.MaxBytes>>20, len(res.Rows))
			break
		}
		bytes += size
		res.Rows = append(res.Rows, row)
	}
	if err := rows.Err(); err != nil {
		return res, err
	}
	for i := range res.Columns {
		res.Columns[i].Numeric = numeric[i] && len(res.Rows) > 0
	}
	res.Total = len(res.Rows)
	res.TotalLabel = "rows"
	return res, nil
}

// pgNumericOIDs are PostgreSQL's number types, whose columns a report shows
// as numbers.
var pgNumericOIDs = map[uint32]bool{20: true, 21: true, 23: true, 700: true, 701: true, 1700: true}

// pgJSONRow reads one row as row_to_json writes it: an object whose keys are
// the columns in order (two columns may share a name).
func pgJSONRow(obj string, fields []pgconn.FieldDescription) ([]string, error) {
	dec := json.NewDecoder(strings.NewReader(obj))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("report row: %q is not an object", obj)
	}
	row := make([]string, 0, len(fields))
	for dec.More() {
		if _, err := dec.Token(); err != nil { // the key
			return nil, fmt.Errorf("report row: %w", err)
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, fmt.Errorf("report row: %w", err)
		}
		row = append(row, pgJSONValue(raw, fields, len(row)))
	}
	if len(row) != len(fields) {
		return nil, fmt.Errorf("report row: %d values for %d columns", len(row), len(fields))
	}
	return row, nil
}

// pgJSONValue writes one value as the report shows it: a string as it is, a
// timestamp in UTC as Stacks writes times, null empty, anything else as JSON
// writes it.
func pgJSONValue(raw json.RawMessage, fields []pgconn.FieldDescription, i int) string {
	switch {
	case string(raw) == "null":
		return ""
	case len(raw) > 0 && raw[0] == '"':
		// A string with no escape is its bytes between the quotes (PostgreSQL
		// escapes every quote and control character): a long value is not
		// scanned again.
		s := string(raw[1 : len(raw)-1])
		if bytes.IndexByte(raw, '\\') >= 0 && json.Unmarshal(raw, &s) != nil {
			return string(raw)
		}
		if i < len(fields) && (fields[i].DataTypeOID == 1184 || fields[i].DataTypeOID == 1114) {
			if t, err := time.Parse("2006-01-02T15:04:05.999999999Z07:00", s); err == nil {
				return cellString(t)
			}
			if t, err := time.Parse("2006-01-02T15:04:05.999999999", s); err == nil {
				return cellString(t)
			}
		}
		return s
	}
	return string(raw)
}

// checkPgPlan refuses the plan of a report (EXPLAIN VERBOSE's JSON, read as
// the report role) if it writes or touches what a report may not read.
func checkPgPlan(plan string) error {
	var tree any
	if err := json.Unmarshal([]byte(plan), &tree); err != nil {
		return fmt.Errorf("report plan: %w", err)
	}
	// The aliases of the scans of tables with secret columns, and every string
	// of the plan (outputs, conditions, function calls, sort keys).
	secretAliases := map[string]string{}
	var texts []string
	var walk func(v any) error
	walk = func(v any) error {
		switch x := v.(type) {
		case map[string]any:
			if op, _ := x["Operation"].(string); op != "" && op != "Select" {
				return stacks.Errorf(stacks.EINVALID, "This SQL would change the database (%s), and reports only read. Write a SELECT.", op)
			}
			if rel, ok := x["Relation Name"].(string); ok {
				rel = strings.ToLower(rel)
				if what, ok := deniedTables[rel]; ok {
					return stacks.Errorf(stacks.EINVALID, "Reports cannot read %s (%s).", rel, what)
				}
				if what, ok := deniedPgRelations[rel]; ok {
					return stacks.Errorf(stacks.EINVALID, "Reports cannot read %s (%s).", rel, what)
				}
				if hiddenColumns[rel] != nil {
					alias, _ := x["Alias"].(string)
					secretAliases[alias] = rel
				}
			}
			for k, e := range x {
				if s, ok := e.(string); ok && k != "Node Type" && k != "Parent Relationship" {
					texts = append(texts, s)
					continue
				}
				if err := walk(e); err != nil {
					return err
				}
			}
		case []any:
			for _, e := range x {
				if err := walk(e); err != nil {
					return err
				}
			}
		case string:
			texts = append(texts, x)
		}
		return nil
	}
	if err := walk(tree); err != nil {
		return err
	}
	for _, s := range texts {
		for _, w := range sqlWords(s) {
			for _, p := range deniedPgFunctions {
				if strings.HasPrefix(w.name, p) {
					return stacks.Errorf(stacks.EINVALID, "Reports cannot call %s: it reaches the server, not the library.", w.name)
				}
			}
			// EXPLAIN VERBOSE names a column alias.column, or column alone when
			// the statement reads one table; a whole row is alias.*.
			alias, col, dotted := strings.Cut(w.name, ".")
			if !dotted {
				alias, col = "", w.name
			}
			if rel, secret := secretAliases[alias]; secret && col == "*" {
				return stacks.Errorf(stacks.EINVALID, "Reports cannot read whole rows of %s: the passwords and PINs are not a report's business (name the columns you need).", rel)
			}
			for alias, rel := range secretAliases {
				if hiddenColumns[rel][col] {
					return stacks.Errorf(stacks.EINVALID, "Reports cannot read %s.%s (%s): the passwords and PINs are not a report's business (name the columns you need).", rel, col, alias)
				}
			}
		}
	}
	return nil
}

// sqlWord is a name in an expression of a plan: a function's (call: followed
// by "("), a column's (alias.column), or an alias's whole row (alias.*).
type sqlWord struct {
	name string
	call bool
}

// sqlWords reads the names in an expression as EXPLAIN VERBOSE prints it,
// outside its string constants: lower case, a quoted name unquoted, a
// schema-qualified function by its own name.
func sqlWords(s string) []sqlWord {
	var out []sqlWord
	r := []rune(s)
	var cur strings.Builder
	flush := func(call bool) {
		if cur.Len() > 0 {
			name := cur.String()
			if call {
				if i := strings.LastIndexByte(name, '.'); i >= 0 {
					name = name[i+1:]
				}
			}
			out = append(out, sqlWord{name: name, call: call})
			cur.Reset()
		}
	}
	for i := 0; i < len(r); i++ {
		c := r[i]
		switch {
		case c == '\'':
			flush(false)
			for i++; i < len(r); i++ {
				if r[i] == '\'' {
					if i+1 < len(r) && r[i+1] == '\'' {
						i++
						continue
					}
					break
				}
			}
		case c == '"':
			for i++; i < len(r) && r[i] != '"'; i++ {
				cur.WriteRune(r[i])
			}
		case c == '_' || c == '$' || c == '.' || c == '*' && cur.Len() > 0 && strings.HasSuffix(cur.String(), ".") || isWordRune(c):
			cur.WriteRune(unicode.ToLower(c))
		case c == '(':
			flush(true)
		case c == ' ' && cur.Len() > 0 && i+1 < len(r) && r[i+1] == '(':
			// "name (" is a call too.
		default:
			flush(false)
		}
	}
	flush(false)
	return out
}

// readReportRows reads a report's rows up to the row cap and the byte cap.
func readReportRows(rows *sql.Rows, lim Limits) (Result, error) {
	var res Result
	cols, err := rows.Columns()
	if err != nil {
		return res, err
	}
	for _, c := range cols {
		res.Columns = append(res.Columns, Column{Name: c})
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	numeric := make([]bool, len(cols))
	for i := range numeric {
		numeric[i] = true
	}
	bytes := 0
	for rows.Next() {
		if len(res.Rows) == lim.MaxRows {
			res.Truncated = true
			res.TruncatedNote = fmt.Sprintf("The report has more rows than the cap of %d: narrow it.", lim.MaxRows)
			break
		}
		if err := rows.Scan(ptrs...); err != nil {
			return res, err
		}
		row := make([]string, len(cols))
		size := 0
		for i, v := range vals {
			row[i] = cellString(v)
			size += len(row[i])
			switch v.(type) {
			case int64, float64, nil:
			default:
				numeric[i] = false
			}
		}
		if bytes+size > lim.MaxBytes {
			res.Truncated = true
			res.TruncatedNote = fmt.Sprintf("The report's values passed %d MB after %d rows and the rest were left out: select fewer or shorter columns, or fewer rows.", lim.MaxBytes>>20, len(res.Rows))
			break
		}
		bytes += size
		res.Rows = append(res.Rows, row)
	}
	if err := rows.Err(); err != nil {
		return res, err
	}
	for i := range res.Columns {
		res.Columns[i].Numeric = numeric[i] && len(res.Rows) > 0
	}
	res.Total = len(res.Rows)
	res.TotalLabel = "rows"
	return res, nil
}

// pgReportError turns PostgreSQL's complaint about an administrator's SQL into
// a message for them.
func pgReportError(err error) error {
	var big *pgproto3.ExceededMaxBodyLenErr
	if errors.As(err, &big) {
		return stacks.Errorf(stacks.EINVALID, "A value of the report grew past %d KB (a long string_agg, repeat or replace): shorten it.", MaxSQLValueBytes>>10)
	}
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return err
	}
	switch pe.Code {
	case "42501": // insufficient_privilege: the report role's privileges
		return stacks.Errorf(stacks.EINVALID, "Reports cannot do that (PostgreSQL: %s): reports only read, and not the passwords and PINs, tokens and sessions, which are not a report's business (name the columns you need).", pe.Message)
	case "25006": // read_only_sql_transaction
		return stacks.Errorf(stacks.EINVALID, "This SQL would change the database, and reports only read: it was refused.")
	case "57014": // query_canceled: the statement timeout
		return errPgTimeout
	case "54000": // program_limit_exceeded
		return stacks.Errorf(stacks.EINVALID, "A value of the report grew too long: shorten it.")
	}
	return stacks.Errorf(stacks.EINVALID, "PostgreSQL could not run the SQL: %s", pe.Message)
}

// errPgTimeout is the server's statement timeout; RunSQL gives it the limit's
// message.
var errPgTimeout = errors.New("the report's statement timeout")

// pgInline writes the report's :name parameters into its SQL as string
// constants ('it”s'), outside strings, quoted names and comments, and drops
// the semicolon that may end it (the report runs inside a larger statement). A
// constant, like a parameter sent as text, takes the type its place in the
// statement needs (a number beside home_branch_id, text beside a barcode), so
// "0012345" keeps its zeros; a cast (x::text) stays as it is. Whatever the
// value holds, the statement runs as the report role.
func pgInline(q string, values map[string]string) string {
	var b strings.Builder
	r := []rune(q)
	for i := 0; i < len(r); i++ {
		c := r[i]
		switch {
		case c == '-' && i+1 < len(r) && r[i+1] == '-':
			j := i
			for j < len(r) && r[j] != '\n' {
				j++
			}
			b.WriteString(string(r[i:j]))
			i = j - 1
		case c == '/' && i+1 < len(r) && r[i+1] == '*':
			end := strings.Index(string(r[i+2:]), "*/")
			j := len(r)
			if end >= 0 {
				j = i + 2 + len([]rune(string(r[i+2:])[:end])) + 2
			}
			b.WriteString(string(r[i:j]))
			i = j - 1
		case c == '\'' || c == '"':
			j := i + 1
			for ; j < len(r); j++ {
				if r[j] == c {
					if j+1 < len(r) && r[j+1] == c {
						j++
						continue
					}
					break
				}
			}
			j = min(j+1, len(r))
			b.WriteString(string(r[i:j]))
			i = j - 1
		case c == ';':
		case c == ':' && i+1 < len(r) && r[i+1] == ':':
			b.WriteString("::")
			i++
		case c == ':' && i+1 < len(r) && isWordRune(r[i+1]):
			j := i + 1
			for j < len(r) && isWordRune(r[j]) {
				j++
			}
			if v, ok := values[string(r[i+1:j])]; ok {
				b.WriteString("'" + strings.ReplaceAll(strings.TrimSpace(v), "'", "''") + "'")
				i = j - 1
				continue
			}
			b.WriteRune(c)
		default:
			b.WriteRune(c)
		}
	}
	return b.String()
}
