package reports

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
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
	// Timeout stops the statement inside SQLite (default DefaultSQLTimeout).
	Timeout time.Duration
	// MaxRows is the most rows read (default DefaultSQLMaxRows); Result.Truncated
	// says the report had more.
	MaxRows int
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

// scanSQL reads SQL as SQLite's tokenizer does as far as a report needs: string
// literals ('it”s'), quoted identifiers ("x", `x`, [x]), comments (-- and /* */),
// semicolons between statements, and parameters (:name; ?, ?NNN, @name and $name
// are positional or other spellings, refused or taken as named alike).
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
		case unicode.IsSpace(c):
		default:
			if !inStatement {
				inStatement = true
				s.statements++
			}
			if c == '?' {
				s.positional = true
				continue
			}
			if (c == ':' || c == '@' || c == '$') && i+1 < len(r) && isWordRune(r[i+1]) {
				j := i + 1
				for j < len(r) && isWordRune(r[j]) {
					j++
				}
				name := string(r[i+1 : j])
				if c == ':' && !seen[name] {
					seen[name] = true
					s.params = append(s.params, name)
				} else if c != ':' {
					s.positional = true
				}
				i = j - 1
				continue
			}
			if isWordRune(c) {
				j := i
				for j < len(r) && isWordRune(r[j]) {
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
func checkProgram(tx *db.Tx, q string, args []any) error {
	rows, err := tx.Query("EXPLAIN "+q, args...)
	if err != nil {
		return sqlError(err)
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
// program checked for writes, on a read-only connection of the heavy-read slots
// (so the desk always keeps a connection), stopped inside SQLite at the time limit,
// and read up to the row cap.
func RunSQL(ctx context.Context, d *db.DB, q string, values map[string]string, lim Limits) (Result, error) {
	if lim.Timeout <= 0 {
		lim.Timeout = DefaultSQLTimeout
	}
	if lim.MaxRows <= 0 {
		lim.MaxRows = DefaultSQLMaxRows
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
	err := d.ReadHeavy(ctx, func(tx *db.Tx) error {
		if err := checkProgram(tx, q, args); err != nil {
			return err
		}
		rows, err := tx.Query(q, args...)
		if err != nil {
			return sqlError(err)
		}
		defer rows.Close()
		cols, err := rows.Columns()
		if err != nil {
			return err
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
		for rows.Next() {
			if len(res.Rows) == lim.MaxRows {
				res.Truncated = true
				break
			}
			if err := rows.Scan(ptrs...); err != nil {
				return sqlError(err)
			}
			row := make([]string, len(cols))
			for i, v := range vals {
				row[i] = cellString(v)
				switch v.(type) {
				case int64, float64, nil:
				default:
					numeric[i] = false
				}
			}
			res.Rows = append(res.Rows, row)
		}
		if err := rows.Err(); err != nil {
			return sqlError(err)
		}
		for i := range res.Columns {
			res.Columns[i].Numeric = numeric[i] && len(res.Rows) > 0
		}
		res.Total = len(res.Rows)
		res.TotalLabel = "rows"
		return nil
	})
	switch {
	case errors.Is(err, db.ErrBusy):
		return Result{}, stacks.Errorf(stacks.ETOOMANY, "Many reports and searches are running at once: run the report again in a moment.")
	case err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		return Result{}, errSQLTimeout(lim.Timeout)
	}
	return res, err
}

// paramValue passes a whole number as a number (so that :branch = 1 matches an
// integer column) and anything else as text.
func paramValue(v string) any {
	v = strings.TrimSpace(v)
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
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

// ListSaved returns the saved SQL reports by name.
func ListSaved(tx *db.Tx) ([]SavedReport, error) {
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

// FindSaved returns one saved SQL report.
func FindSaved(tx *db.Tx, id int64) (SavedReport, error) {
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

// SaveSQL creates a saved report (id 0) or replaces one, after Validate; the
// audit log records who did.
func SaveSQL(tx *db.Tx, actor stacks.Actor, id int64, in SavedInput) (int64, error) {
	if err := in.Validate(); err != nil {
		return 0, err
	}
	now := db.FormatTime(tx.Now())
	var staffID any
	if actor.StaffID != 0 {
		staffID = actor.StaffID
	}
	if id == 0 {
		res, err := tx.Exec(`INSERT INTO saved_reports (name, description, sql, staff_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)`,
			in.Name, in.Description, in.SQL, staffID, now, now)
		if db.IsUniqueViolation(err) {
			return 0, stacks.FieldErrorf("name", stacks.ECONFLICT, "A report called %q exists already: choose another name.", in.Name)
		} else if err != nil {
			return 0, fmt.Errorf("save report: %w", err)
		}
		id, err = res.LastInsertId()
		if err != nil {
			return 0, err
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

// DeleteSaved deletes a saved report.
func DeleteSaved(tx *db.Tx, actor stacks.Actor, id int64) error {
	res, err := tx.Exec(`DELETE FROM saved_reports WHERE id = ?`, id)
	if err != nil {
		return fmt.Errorf("delete report: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return stacks.Errorf(stacks.ENOTFOUND, "There is no saved report %d.", id)
	}
	return tx.Audit(actor, "sql_report.delete", "saved_report", id, "")
}
