package reports

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// SavedReport is an SQL report an administrator saved.
type SavedReport struct {
	ID          int64
	Name        string
	Description string
	SQL         string
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// Params are the named parameters the report's SQL takes, in order of first use.
func (r SavedReport) Params() []string {
	s, _ := scanSQL(r.SQL)
	return s.params
}

// SavedInput is what an administrator types to save a report.
type SavedInput struct {
	Name        string
	Description string
	SQL         string
}

// Limits bound an SQL report's run.
type Limits struct {
	// Timeout stops the statement inside SQLite, or PostgreSQL's
	// statement_timeout (default DefaultSQLTimeout).
	Timeout time.Duration
	// MaxRows is the most rows read (default DefaultSQLMaxRows); Result.Truncated
	// says the report had more.
	MaxRows int
	// MaxBytes is the most bytes of values read (default DefaultSQLMaxBytes);
	// Result.Truncated and TruncatedNote say the report had more.
	MaxBytes int
}

// The default limits of an SQL report: enough for the questions a library asks
// of its own data, and far from stalling anything.
const (
	DefaultSQLTimeout = 10 * time.Second
	DefaultSQLMaxRows = 5000
	maxSQLLength      = 20000
)

// ErrSQLTimeout is the message of a report stopped at its time limit.
func errSQLTimeout(d time.Duration) error {
	return stacks.Errorf(stacks.EINVALID, "The report ran for longer than %s and was stopped. Narrow it (a WHERE on a date or a branch, a LIMIT) or check that a recursive query ends.", d)
}

// Validate checks the input: a name, and SQL that passes CheckSQL.
func (in *SavedInput) Validate() error {
	in.Name = strings.TrimSpace(in.Name)
	in.Description = strings.TrimSpace(in.Description)
	in.SQL = strings.TrimSpace(in.SQL)
	switch {
	case in.Name == "":
		return stacks.FieldErrorf("name", stacks.EINVALID, "Give the report a name.")
	case badText(in.Name, ""):
		return stacks.FieldErrorf("name", stacks.EINVALID, "The name holds characters that are not text: type it again.")
	case badText(in.Description, ""):
		return stacks.FieldErrorf("description", stacks.EINVALID, "The description holds characters that are not text: type it again.")
	case badText(in.SQL, "\t\r\n"):
		return stacks.FieldErrorf("sql", stacks.EINVALID, "The SQL holds characters that are not text (only tabs and line breaks may be among them): type it again.")
	case len(in.Name) > 100:
		return stacks.FieldErrorf("name", stacks.EINVALID, "Keep the name under 100 characters.")
	case len(in.Description) > 1000:
		return stacks.FieldErrorf("description", stacks.EINVALID, "Keep the description under 1,000 characters.")
	}
	if err := CheckSQL(in.SQL); err != nil {
		return &stacks.Error{Code: stacks.EINVALID, Message: stacks.ErrorMessage(err), Field: "sql"}
	}
	return nil
}

// CheckSQL refuses, before anything runs, SQL that is not one read-only query: it
// must be a single SELECT (or WITH ... SELECT, or VALUES) statement with named
// parameters (:name). This is the first of three guards: the statement's compiled
// program is checked for writes (checkProgram), and it runs on a connection of
// the read pool, which is opened with PRAGMA query_only.
func CheckSQL(q string) error {
	if strings.TrimSpace(q) == "" {
		return stacks.Errorf(stacks.EINVALID, "Type the SQL of the report: one SELECT statement.")
	}
	if len(q) > maxSQLLength {
		return stacks.Errorf(stacks.EINVALID, "The SQL is longer than %d characters.", maxSQLLength)
	}
	s, err := scanSQL(q)
	if err != nil {
		return err
	}
	if s.statements > 1 {
		return stacks.Errorf(stacks.EINVALID, "The SQL holds %d statements; a report is one SELECT statement (remove the semicolons between them).", s.statements)
	}
	switch s.first {
	case "SELECT", "WITH", "VALUES":
	case "":
		return stacks.Errorf(stacks.EINVALID, "Type the SQL of the report: one SELECT statement.")
	default:
		return stacks.Errorf(stacks.EINVALID, "A report only reads: it starts with SELECT or WITH, not %s. Reports cannot change the database.", s.first)
	}
	if s.positional {
		return stacks.Errorf(stacks.EINVALID, "Name the parameters (:from, :branch) instead of using ?: the form asks for each by its name.")
	}
	return nil
}

// scanned is what scanSQL finds in SQL outside strings, quoted names and comments.
type scanned struct {
	first      string // the first keyword, upper case
	statements int
	params     []string
	positional bool
}

// scanSQL reads SQL as SQLite's tokenizer (tokenize.c, sqlite3GetToken) does as
// far as a report needs: string literals ('it”s'), quoted identifiers ("x",
// `x`, [x]), comments (-- and /* */), semicolons between statements, words of
// identifier characters (letters, digits, _, $ and every non-ASCII character),
// and parameters: :name, and SQLite's other spellings (?, ?NNN, @name, $name,
// #name, and the Tcl forms :name(...) and :a::b, whose parentheses run to the
// first ')' or blank, quotes and semicolons included), which are refused. A
// split that differs from SQLite's (a quote or semicolon inside a :name(...)
// taken as a string or a statement's end) would let a second statement
// through; TestScanSQLAgreesWithSQLite compares the two on tricky inputs.
func scanSQL(q string) (scanned, error) {
	var s scanned
	seen := map[string]bool{}
	r := []rune(q)
	inStatement := false
	for i := 0; i < len(r); i++ {
		c := r[i]
		switch {
		case c == '-' && i+1 < len(r) && r[i+1] == '-':
			for i < len(r) && r[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(r) && r[i+1] == '*':
			end := strings.Index(string(r[i+2:]), "*/")
			if end < 0 {
				return s, stacks.Errorf(stacks.EINVALID, "A /* comment is not closed with */.")
			}
			i += 2 + len([]rune(string(r[i+2:])[:end])) + 1
		case c == '\'' || c == '"' || c == '`' || c == '[':
			closer := c
			if c == '[' {
				closer = ']'
			}
			j := i + 1
			for ; j < len(r); j++ {
				if r[j] == closer {
					if closer != ']' && j+1 < len(r) && r[j+1] == closer {
						j++ // a doubled quote inside
						continue
					}
					break
				}
			}
			if j >= len(r) {
				return s, stacks.Errorf(stacks.EINVALID, "A quoted string or name is not closed: check the quotes (%c).", c)
			}
			if !inStatement {
				inStatement = true
				s.statements++
			}
			i = j
		case c == ';':
			inStatement = false
		case isSQLiteSpace(c):
		default:
			if !inStatement {
				inStatement = true
				s.statements++
			}
			if c == '?' || c == '$' && !(i+1 < len(r) && sqliteIDChar(r[i+1])) {
				// ?, ?NNN; a lone $ (PostgreSQL's $$ quotes, whose contents
				// this scan would not skip) is refused alike.
				s.positional = true
				continue
			}
			if c == ':' && i+1 < len(r) && r[i+1] == ':' {
				i++ // a PostgreSQL cast (x::text), not a parameter
				continue
			}
			if c == ':' || c == '@' || c == '$' || c == '#' {
				j, plain, ok := sqliteVariable(r, i)
				if !ok {
					return s, stacks.Errorf(stacks.EINVALID, "A parameter %s( is not closed with ): name parameters with letters, digits and _ only (:from).", string(r[i:min(j, i+20)]))
				}
				if j == i+1 {
					// A sigil alone: not a parameter in SQLite either.
					if s.first == "" && s.statements == 1 {
						s.first = string(c)
					}
					continue
				}
				name := string(r[i+1 : j])
				switch {
				case c != ':':
					s.positional = true
				case !plain && strings.Contains(name, "::"):
					// SQLite reads :from::date as one parameter, whatever the engine.
					base, _, _ := strings.Cut(name, "::")
					return s, stacks.Errorf(stacks.EINVALID, "The parameter :%s is not a plain name: to give a parameter a type, write CAST(:%s AS type) instead of :%s.", name, base, name)
				case !plain:
					return s, stacks.Errorf(stacks.EINVALID, "The parameter :%s is not a plain name: name parameters with letters, digits and _ only (:from).", name)
				case !seen[name]:
					seen[name] = true
					s.params = append(s.params, name)
				}
				i = j - 1
				continue
			}
			if sqliteIDChar(c) {
				j := i
				for j < len(r) && sqliteIDChar(r[j]) {
					j++
				}
				if s.first == "" && s.statements == 1 {
					s.first = strings.ToUpper(string(r[i:j]))
				}
				i = j - 1
			} else if s.first == "" && s.statements == 1 {
				s.first = string(c)
			}
		}
	}
	return s, nil
}

func isWordRune(c rune) bool { return c == '_' || unicode.IsLetter(c) || unicode.IsDigit(c) }

// sqliteIDChar is SQLite's IdChar: a character of an identifier, keyword,
// number or parameter name (ASCII letters and digits, _ and $, and every
// character past ASCII).
func sqliteIDChar(c rune) bool {
	return c >= 0x80 || c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// isSQLiteSpace is SQLite's sqlite3Isspace: ASCII blanks only (a non-ASCII
// space is an identifier character to SQLite).
func isSQLiteSpace(c rune) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'
}

// sqliteVariable reads a parameter that starts at r[i] (:, @, $ or #) as
// SQLite's tokenizer does (the CC_VARALPHA case of sqlite3GetToken): identifier
// characters, "::" pairs, and a Tcl-style "(...)" that runs to the first ')'
// or blank. It returns the end of the token, whether its name is plain
// (letters, digits and _ only), and false when the parentheses are not closed
// (SQLite's TK_ILLEGAL).
func sqliteVariable(r []rune, i int) (end int, plain, ok bool) {
	plain = true
	n := 0
	j := i + 1
	for j < len(r) {
		c := r[j]
		switch {
		case sqliteIDChar(c):
			if !isWordRune(c) {
				plain = false
			}
			n++
			j++
			continue
		case c == '(' && n > 0:
			plain = false
			for j++; j < len(r) && !isSQLiteSpace(r[j]) && r[j] != ')'; j++ {
			}
			if j < len(r) && r[j] == ')' {
				return j + 1, false, true
			}
			return j, false, false
		case c == ':' && j+1 < len(r) && r[j+1] == ':':
			plain = false
			j += 2
			continue
		}
		break
	}
	return j, plain, true
}

// writeOpcodes are the opcodes of SQLite's virtual machine that change a
// database (or the schema, or the connection's databases). Insert and Delete are
// not among them: a read uses them on ephemeral tables (a recursive CTE's queue,
// DISTINCT), and a write to a real table must first open it with OpenWrite.
var writeOpcodes = map[string]bool{
	"OpenWrite": true, "Destroy": true, "Clear": true, "CreateBtree": true, "ParseSchema": true, "DropTable": true,
	"DropIndex": true, "DropTrigger": true, "Vacuum": true, "VCreate": true, "VDestroy": true,
	"VUpdate": true, "JournalMode": true, "IncrVacuum": true, "Expire": true, "SetCookie": true,
	"RenameTable": true, "LoadAnalysis": true,
}

// checkProgram compiles the query with EXPLAIN and refuses it if its program
// writes: a write opcode, or a write transaction (Transaction with P2 > 0). This
// is the test sqlite3_stmt_readonly makes, done through database/sql, which does
// not expose that function.
func checkProgram(ctx context.Context, c *sql.Conn, guard *reportGuard, q string, args []any) error {
	rows, err := c.QueryContext(ctx, "EXPLAIN "+q, args...)
	if err != nil {
		return guard.sqlError(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		op := cellString(vals[1])
		p2, _ := strconv.Atoi(cellString(vals[3]))
		if writeOpcodes[op] || (op == "Transaction" && p2 > 0) {
			return stacks.Errorf(stacks.EINVALID, "This SQL would change the database (%s), and reports only read. Write a SELECT.", op)
		}
	}
	return rows.Err()
}

// sqlError turns SQLite's complaint about an administrator's SQL into a message
// for them ("no such column: titel"), which is theirs to read.
func sqlError(err error) error {
	msg := err.Error()
	if i := strings.Index(msg, "SQL logic error: "); i >= 0 {
		msg = msg[i+len("SQL logic error: "):]
	}
	msg = strings.TrimSuffix(msg, " (1)")
	if strings.Contains(msg, "readonly database") || strings.Contains(msg, "query_only") {
		return stacks.Errorf(stacks.EINVALID, "This SQL would change the database, and reports only read: it was refused.")
	}
	return stacks.Errorf(stacks.EINVALID, "SQLite could not run the SQL: %s", msg)
}

// RunSQL runs an SQL report with its parameters' values: checked by CheckSQL, its
// program checked for writes, in one of the heavy-read slots (so the desk always
// keeps a connection), on a connection of its own that is query_only, whose
// authorizer hides the secrets and refuses the raw pages (reportAuthorizer), whose
// values are capped at MaxSQLValueBytes, stopped inside SQLite at the time limit,
// and read up to the row cap and the byte cap.
//
// On PostgreSQL the same guarantees come from the report role, which may read
// only what is not secret (sqlreport_pgrole.go), in a READ ONLY transaction
// with a statement_timeout on a connection of the report's own, and its plan
// checked first (runOnPostgres, sqlreport_postgres.go).
func RunSQL(ctx context.Context, d *db.DB, q string, values map[string]string, lim Limits) (Result, error) {
	if lim.Timeout <= 0 {
		lim.Timeout = DefaultSQLTimeout
	}
	if lim.MaxRows <= 0 {
		lim.MaxRows = DefaultSQLMaxRows
	}
	if lim.MaxBytes <= 0 {
		lim.MaxBytes = DefaultSQLMaxBytes
	}
	if err := CheckSQL(q); err != nil {
		return Result{}, err
	}
	s, _ := scanSQL(q)
	var args []any
	for _, p := range s.params {
		v, ok := values[p]
		if !ok {
			return Result{}, stacks.FieldErrorf("param-"+p, stacks.EINVALID, "Give a value for :%s.", p)
		}
		args = append(args, sql.Named(p, paramValue(v)))
	}
	ctx, cancel := context.WithTimeout(ctx, lim.Timeout)
	defer cancel()
	var res Result
	// The heavy-read slot bounds how many reports and searches run at once; the
	// report itself runs on its own connection (below), not on the slot's.
	err := d.ReadHeavy(ctx, func(*db.Tx) error {
		var err error
		if d.Postgres() {
			res, err = runOnPostgres(ctx, d.Path(), pgInline(q, values), lim)
			return err
		}
		res, err = runOnReportConn(ctx, d.Path(), q, args, lim)
		return err
	})
	switch {
	case errors.Is(err, db.ErrBusy):
		return Result{}, stacks.Errorf(stacks.ETOOMANY, "Many reports and searches are running at once: run the report again in a moment.")
	case errors.Is(err, errPgTimeout), err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		return Result{}, errSQLTimeout(lim.Timeout)
	}
	return res, err
}

// MaxSQLValueBytes is SQLITE_LIMIT_LENGTH on a report's connection: no string or
// blob a report builds (randomblob, hex, group_concat, replace) may be longer, so
// one expression cannot take hundreds of megabytes.
const MaxSQLValueBytes = 1 << 20

// DefaultSQLMaxBytes is the most bytes of values a report reads (the page and
// the CSV file hold them all): rows past it are left out and the result says so.
const DefaultSQLMaxBytes = 20 << 20

// openReportConn opens a connection of the report's own on the database file:
// query_only, with reportAuthorizer and the value length limit installed. They
// stay with that one connection, which is closed after the run, so no other read
// ever runs under (or without) them by mistake.
func openReportConn(ctx context.Context, path string) (*sql.DB, *sql.Conn, *reportGuard, error) {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(5000)")
	q.Add("_pragma", "query_only(1)")
	// A plain file name, as db.Open uses, so that "#" stays part of the name.
	connector, err := sqlite.NewConnector(path + "?" + q.Encode())
	if err != nil {
		return nil, nil, nil, fmt.Errorf("report connection: %w", err)
	}
	pool := sql.OpenDB(connector)
	pool.SetMaxOpenConns(1)
	c, err := pool.Conn(ctx)
	if err != nil {
		pool.Close()
		return nil, nil, nil, fmt.Errorf("report connection: %w", err)
	}
	guard := &reportGuard{}
	err = c.Raw(func(driverConn any) error {
		a, ok := driverConn.(sqlite.AuthorizerRegisterer)
		if !ok {
			return fmt.Errorf("report connection: the SQLite driver (%T) has no authorizer", driverConn)
		}
		return a.RegisterAuthorizer(guard.authorize)
	})
	if err == nil {
		_, err = sqlite.Limit(c, sqlite3.SQLITE_LIMIT_LENGTH, MaxSQLValueBytes)
	}
	if err != nil {
		c.Close()
		pool.Close()
		return nil, nil, nil, err
	}
	return pool, c, guard, nil
}

// runOnReportConn checks and runs the report on a connection of its own.
func runOnReportConn(ctx context.Context, path, q string, args []any, lim Limits) (Result, error) {
	var res Result
	pool, c, guard, err := openReportConn(ctx, path)
	if err != nil {
		return res, err
	}
	defer pool.Close()
	defer c.Close()
	if err := checkProgram(ctx, c, guard, q, args); err != nil {
		return res, err
	}
	rows, err := c.QueryContext(ctx, q, args...)
	if err != nil {
		return res, guard.sqlError(err)
	}
	defer rows.Close()
	res, err = readReportRows(rows, lim)
	if err != nil {
		return res, guard.sqlError(err)
	}
	return res, nil
}

// hiddenColumns are the secrets a report reads as NULL: the password and PIN
// hashes. They are IGNOREd rather than refused so that "SELECT * FROM
// staff_users" or a patron listing still runs, with the secret column empty; an
// ignored column is NULL everywhere in the statement (in WHERE and ORDER BY too),
// so no comparison can guess it either.
var hiddenColumns = map[string]map[string]bool{
	"staff_users":  {"password_hash": true},
	"sip_accounts": {"password_hash": true},
	"patrons":      {"pin_hash": true},
}

// deniedTables are the tables a report may not name at all: the sessions (each
// row is a signed-in person's token hash and session data: nothing in them is a
// report's business, so refusing says so plainly rather than showing empty
// rows), the raw pages of the file and its page statistics (sqlite_dbpage reads
// every byte, secrets included; dbstat), which SQLite's virtual tables expose.
var deniedTables = map[string]string{
	"sessions":      "the staff's sessions",
	"opac_sessions": "the patrons' catalogue sessions",
	"sqlite_dbpage": "the database file's raw pages",
	"dbstat":        "the database file's page statistics",
}

// reportGuard is the authorizer of a report's connection; it remembers why it
// refused, for the message.
type reportGuard struct {
	mu     sync.Mutex
	denied string
}

// authorize allows what one read-only SELECT needs (SELECT, READ, FUNCTION,
// RECURSIVE) and refuses every other action: writes, PRAGMA (and so the
// pragma_* table-valued functions, such as pragma_database_list, which names the
// server's file), ATTACH, transactions.
func (g *reportGuard) authorize(action sqlite.AuthorizerActionCode, arg1, arg2, _, _ string) sqlite.AuthorizerReturnCode {
	switch action {
	case sqlite.AuthSelect, sqlite.AuthRecursive:
		return sqlite.AuthorizerOK
	case sqlite.AuthFunction:
		if strings.HasPrefix(strings.ToLower(arg2), "pragma_") || strings.EqualFold(arg2, "load_extension") {
			return g.deny(fmt.Sprintf("Reports cannot call %s.", arg2))
		}
		return sqlite.AuthorizerOK
	case sqlite.AuthRead:
		table := strings.ToLower(arg1)
		if what, ok := deniedTables[table]; ok {
			return g.deny(fmt.Sprintf("Reports cannot read %s (%s).", table, what))
		}
		if strings.HasPrefix(table, "pragma_") {
			return g.deny(fmt.Sprintf("Reports cannot read %s: the PRAGMA tables describe the server, not the library.", table))
		}
		if hiddenColumns[table][strings.ToLower(arg2)] {
			return sqlite.AuthorizerIgnore
		}
		return sqlite.AuthorizerOK
	case sqlite.AuthPragma:
		// A report's own SQL cannot name a PRAGMA (CheckSQL, and the
		// pragma_ functions are refused above); FTS5 reads data_version, a
		// counter of changes, to know whether its cached index is stale, so a
		// full-text MATCH on records_fts runs.
		if strings.EqualFold(arg1, "data_version") && arg2 == "" {
			return sqlite.AuthorizerOK
		}
		return g.deny(fmt.Sprintf("Reports cannot run PRAGMA %s or read the PRAGMA tables (pragma_...): they describe the server, not the library.", arg1))
	}
	return g.deny("This SQL would change the database, and reports only read: it was refused.")
}

func (g *reportGuard) deny(why string) sqlite.AuthorizerReturnCode {
	g.mu.Lock()
	if g.denied == "" {
		g.denied = why
	}
	g.mu.Unlock()
	return sqlite.AuthorizerDeny
}

// sqlError is sqlError with the authorizer's reason when it refused the SQL.
func (g *reportGuard) sqlError(err error) error {
	g.mu.Lock()
	why := g.denied
	g.mu.Unlock()
	if why != "" && (strings.Contains(err.Error(), "not authorized") || strings.Contains(err.Error(), "authorization denied")) {
		return stacks.Errorf(stacks.EINVALID, "%s", why)
	}
	if strings.Contains(err.Error(), "string or blob too big") {
		return stacks.Errorf(stacks.EINVALID, "A value of the report grew past %d KB (a long group_concat, randomblob or replace): shorten it.", MaxSQLValueBytes>>10)
	}
	return sqlError(err)
}

// paramValue passes a whole number written the way SQLite writes it as a number
// (so that :branch = 1 matches an integer column) and anything else as text: a
// barcode "0012345" or "+5" keeps its spelling, so it matches a text column.
func paramValue(v string) any {
	v = strings.TrimSpace(v)
	if n, err := strconv.ParseInt(v, 10, 64); err == nil && strconv.FormatInt(n, 10) == v {
		return n
	}
	return v
}

// cellString writes a value SQLite returned.
func cellString(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case []byte:
		return string(x)
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case time.Time:
		return x.UTC().Format(db.TimeFormat)
	default:
		return fmt.Sprint(x)
	}
}

// listSaved returns the saved SQL reports by name.
func listSaved(tx *db.Tx) ([]SavedReport, error) {
	rows, err := tx.Query(`SELECT id, name, description, sql, created_at, updated_at FROM saved_reports ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("saved reports: %w", err)
	}
	defer rows.Close()
	var out []SavedReport
	for rows.Next() {
		var r SavedReport
		var c, u db.Time
		if err := rows.Scan(&r.ID, &r.Name, &r.Description, &r.SQL, &c, &u); err != nil {
			return nil, err
		}
		r.CreatedAt, r.UpdatedAt = c.Time, u.Time
		out = append(out, r)
	}
	return out, rows.Err()
}

// findSaved returns one saved SQL report.
func findSaved(tx *db.Tx, id int64) (SavedReport, error) {
	var r SavedReport
	var c, u db.Time
	err := tx.QueryRow(`SELECT id, name, description, sql, created_at, updated_at FROM saved_reports WHERE id = ?`, id).
		Scan(&r.ID, &r.Name, &r.Description, &r.SQL, &c, &u)
	if errors.Is(err, sql.ErrNoRows) {
		return r, stacks.Errorf(stacks.ENOTFOUND, "There is no saved report %d. Choose one from the list of SQL reports.", id)
	} else if err != nil {
		return r, fmt.Errorf("saved report %d: %w", id, err)
	}
	r.CreatedAt, r.UpdatedAt = c.Time, u.Time
	return r, nil
}

// saveSQL creates a saved report (id 0) or replaces one, after Validate; the
// audit log records who did.
func saveSQL(tx *db.Tx, actor stacks.Actor, id int64, in SavedInput) (int64, error) {
	if err := in.Validate(); err != nil {
		return 0, err
	}
	now := db.FormatTime(tx.Now())
	var staffID any
	if actor.StaffID != 0 {
		staffID = actor.StaffID
	}
	if id == 0 {
		err := tx.QueryRow(`INSERT INTO saved_reports (name, description, sql, staff_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING id`,
			in.Name, in.Description, in.SQL, staffID, now, now).Scan(&id)
		if db.IsUniqueViolation(err) {
			return 0, stacks.FieldErrorf("name", stacks.ECONFLICT, "A report called %q exists already: choose another name.", in.Name)
		} else if err != nil {
			return 0, fmt.Errorf("save report: %w", err)
		}
		return id, tx.Audit(actor, "sql_report.create", "saved_report", id, in.Name)
	}
	res, err := tx.Exec(`UPDATE saved_reports SET name = ?, description = ?, sql = ?, staff_id = ?, updated_at = ? WHERE id = ?`,
		in.Name, in.Description, in.SQL, staffID, now, id)
	if db.IsUniqueViolation(err) {
		return 0, stacks.FieldErrorf("name", stacks.ECONFLICT, "A report called %q exists already: choose another name.", in.Name)
	} else if err != nil {
		return 0, fmt.Errorf("save report: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return 0, stacks.Errorf(stacks.ENOTFOUND, "There is no saved report %d.", id)
	}
	return id, tx.Audit(actor, "sql_report.update", "saved_report", id, in.Name)
}

// auditRun records that actor ran saved report id (on the page, or as a CSV
// file), with the parameters' values and how many rows it gave: a report reads
// patrons' details, and who read what is the audit log's question, as for the
// patron export.
func auditRun(tx *db.Tx, actor stacks.Actor, id int64, values map[string]string, res Result, csv bool) error {
	names := make([]string, 0, len(values))
	for n := range values {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	if csv {
		b.WriteString("CSV: ")
	}
	fmt.Fprintf(&b, "%d rows", len(res.Rows))
	if res.Truncated {
		b.WriteString(" (truncated)")
	}
	for _, n := range names {
		v := []rune(values[n])
		if len(v) > 100 {
			v = append(v[:100], '…')
		}
		fmt.Fprintf(&b, "; :%s=%q", n, string(v))
	}
	return tx.Audit(actor, "sql_report.run", "saved_report", id, b.String())
}

// deleteSaved deletes a saved report.
func deleteSaved(tx *db.Tx, actor stacks.Actor, id int64) error {
	res, err := tx.Exec(`DELETE FROM saved_reports WHERE id = ?`, id)
	if err != nil {
		return fmt.Errorf("delete report: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return stacks.Errorf(stacks.ENOTFOUND, "There is no saved report %d.", id)
	}
	return tx.Audit(actor, "sql_report.delete", "saved_report", id, "")
}
