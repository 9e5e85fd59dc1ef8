package db

import (
	"errors"
	"strconv"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5/pgconn"
)

// Engine is the database engine a DB runs on. Domain packages keep one statement
// for both wherever the SQL is portable; where the engines differ (full-text
// search, date arithmetic, integrity checks) a package holds a variant per
// engine and picks it with tx.Engine(), in one small function, never with
// engine tests spread through its code.
type Engine int

const (
	// SQLite is the embedded default: one library, one file.
	SQLite Engine = iota
	// Postgres is PostgreSQL, for a consortium: several servers, one database.
	Postgres
)

// String names the engine as STACKS_TEST_ENGINES and test names spell it.
func (e Engine) String() string {
	if e == Postgres {
		return "postgres"
	}
	return "sqlite"
}

// IsPostgresURL reports whether a --db target names a PostgreSQL database (a
// postgres:// or postgresql:// URL) rather than a SQLite file.
func IsPostgresURL(target string) bool {
	return strings.HasPrefix(target, "postgres://") || strings.HasPrefix(target, "postgresql://")
}

// Engine returns the engine the database runs on.
func (db *DB) Engine() Engine { return db.engine }

// Postgres reports whether the database is PostgreSQL.
func (db *DB) Postgres() bool { return db.engine == Postgres }

// Engine returns the engine the transaction runs on, for a statement that needs
// a per-engine variant.
func (tx *Tx) Engine() Engine {
	if tx.rebind != nil {
		return Postgres
	}
	return SQLite
}

// PerEngine is one statement written for each engine, where portable SQL will
// not do (full-text search, date arithmetic, upserts the engines spell
// differently). A domain package keeps it beside its other SQL as a package
// variable and runs tx.SQL(stmt):
//
//	var dueSoon = db.PerEngine{
//		SQLite:   `... date(?, '+2 days') ...`,
//		Postgres: `... (?::date + 2)::text ...`,
//	}
type PerEngine struct {
	SQLite, Postgres string
}

// SQL returns the variant of p for the transaction's engine.
func (tx *Tx) SQL(p PerEngine) string {
	if tx.rebind != nil {
		return p.Postgres
	}
	return p.SQLite
}

// Pick returns sqlite or postgres, whichever is for the engine tx runs on: the
// per-engine choice for a fragment of a statement or anything else a PerEngine
// statement will not hold (a domain package builds the rest of the SQL around it).
func Pick[T any](tx *Tx, sqlite, postgres T) T {
	if tx.rebind != nil {
		return postgres
	}
	return sqlite
}

// IsUniqueViolation reports whether err is a UNIQUE constraint failure (SQLite's
// message, PostgreSQL's SQLSTATE 23505), which the domain packages turn into a
// conflict ("that barcode already exists").
func IsUniqueViolation(err error) bool {
	if err == nil {
		return false
	}
	if code := pgCode(err); code != "" {
		return code == "23505"
	}
	return strings.Contains(err.Error(), "UNIQUE constraint failed")
}

// pgCode returns the SQLSTATE of a PostgreSQL error in err's chain, or "".
func pgCode(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// rebinder rewrites the '?' placeholders the domain packages write into
// PostgreSQL's $1, $2, ..., once per distinct statement: the result is kept,
// so a statement that runs again costs a map lookup. The cache is bounded: SQL
// built at run time (reports, IN lists) cannot grow it for ever.
type rebinder struct {
	mu sync.RWMutex
	m  map[string]string
}

// rebindCacheSize bounds the rewritten statements kept; past it the cache starts
// again empty (the statements in use come back at once).
const rebindCacheSize = 4096

func newRebinder() *rebinder { return &rebinder{m: map[string]string{}} }

func (r *rebinder) get(query string) string {
	r.mu.RLock()
	q, ok := r.m[query]
	r.mu.RUnlock()
	if ok {
		return q
	}
	q = Rebind(query)
	r.mu.Lock()
	if len(r.m) >= rebindCacheSize {
		r.m = map[string]string{}
	}
	r.m[query] = q
	r.mu.Unlock()
	return q
}

// Rebind rewrites each '?' placeholder of query as $1, $2, ... in order (and
// SQLite's numbered ?NNN as $NNN, a bare ? after it numbered as SQLite numbers it), leaving
// alone a '?' inside a string literal ('it”s?'), a quoted identifier ("a?"), a
// dollar-quoted string ($$?$$, $tag$?$tag$) or a comment (-- ?, /* ? */).
func Rebind(query string) string {
	if strings.IndexByte(query, '?') < 0 {
		return query
	}
	var b strings.Builder
	b.Grow(len(query) + 16)
	n := 0
	for i := 0; i < len(query); {
		c := query[i]
		switch {
		case c == '?':
			// ?NNN is SQLite's numbered parameter NNN, PostgreSQL's $NNN; a
			// bare ? is, as in SQLite, one more than the largest number
			// assigned so far.
			j := i + 1
			for j < len(query) && query[j] >= '0' && query[j] <= '9' {
				j++
			}
			if j > i+1 {
				if k, err := strconv.Atoi(query[i+1 : j]); err == nil && k > 0 {
					n = max(n, k)
					b.WriteByte('$')
					b.WriteString(query[i+1 : j])
					i = j
					continue
				}
			}
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			i++
			continue
		case c == '\'' || c == '"':
			// A quoted string or identifier; a doubled quote stays inside.
			j := i + 1
			for j < len(query) {
				if query[j] == c {
					if j+1 < len(query) && query[j+1] == c {
						j += 2
						continue
					}
					j++
					break
				}
				j++
			}
			b.WriteString(query[i:j])
			i = j
			continue
		case c == '-' && i+1 < len(query) && query[i+1] == '-':
			j := strings.IndexByte(query[i:], '\n')
			if j < 0 {
				j = len(query) - i
			}
			b.WriteString(query[i : i+j])
			i += j
			continue
		case c == '/' && i+1 < len(query) && query[i+1] == '*':
			j := strings.Index(query[i+2:], "*/")
			end := len(query)
			if j >= 0 {
				end = i + 2 + j + 2
			}
			b.WriteString(query[i:end])
			i = end
			continue
		case c == '$':
			if tag, ok := dollarTag(query[i:]); ok {
				j := strings.Index(query[i+len(tag):], tag)
				end := len(query)
				if j >= 0 {
					end = i + len(tag) + j + len(tag)
				}
				b.WriteString(query[i:end])
				i = end
				continue
			}
		}
		b.WriteByte(c)
		i++
	}
	return b.String()
}

// dollarTag returns the opening tag of a dollar-quoted string at the start of s
// ("$$" or "$name$"), if there is one. "$1" is a parameter, not a tag.
func dollarTag(s string) (string, bool) {
	for j := 1; j < len(s); j++ {
		c := s[j]
		if c == '$' {
			return s[:j+1], true
		}
		letter := c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !letter && !(j > 1 && c >= '0' && c <= '9') {
			return "", false
		}
	}
	return "", false
}
