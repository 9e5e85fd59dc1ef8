// Package db is the database plumbing every domain package uses: it opens the
// library database (a SQLite file, or PostgreSQL for a consortium: see
// postgres.go), applies the migrations, serializes writes, hands out read and
// write transactions, and counts the SQL statements and time each request spends.
//
// SQLite allows one writer at a time. Rather than let concurrent desks race for the
// write lock (and see "database is locked"), all writes go through one connection,
// so they queue in Go; reads use a separate pool of read-only connections whose size
// is configurable. Each write transaction starts with BEGIN IMMEDIATE so that several
// processes (CGI mode) also queue on the busy timeout instead of deadlocking.
//
// On PostgreSQL several stacks serve processes write to one database, so the
// queue in Go no longer orders their writes. Each write transaction instead
// begins by taking one transaction-scoped advisory lock
// (pg_advisory_xact_lock), held until it commits or rolls back: writes from
// every server run one at a time, exactly as they do on SQLite, each sees
// everything committed before it, and a read-then-write check ("is this item
// on loan?") holds without retries. SERIALIZABLE with a retry of the whole
// function was the alternative; it was not chosen because the domain packages'
// write functions are not all safe to run twice (some append their results to
// a slice the caller holds, e.g. circulation's renewals), and a retry that
// doubles a result is worse than a queue. Reads run in REPEATABLE READ READ ONLY
// transactions: one snapshot, no lock, never waiting for the writers.
//
// Domain SQL is written once, with '?' placeholders, for both engines; where
// they differ a package keeps a PerEngine statement and runs tx.SQL(stmt)
// (engine.go).
package db

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"modernc.org/sqlite"

	"github.com/stacks-ils/stacks"
)

// Options configure Open.
type Options struct {
	// ReadConns is the size of the read connection pool (default 4).
	ReadConns int
	// Synchronous is SQLite's synchronous setting: "FULL" (the default: a commit
	// survives a power cut) or "NORMAL" (faster; a power cut may lose the last
	// commits, never corrupt the database). Benchmarks compare the two.
	Synchronous string
	// BusyTimeout is how long a connection waits for another process's lock.
	BusyTimeout time.Duration
	// ExistingFile opens a database known to exist and to be in WAL mode without
	// connecting until the first statement (CGI start-up). On PostgreSQL it
	// skips the connection check Open otherwise makes.
	ExistingFile bool
	// CommitEach gives every write transaction its own durable commit. By default
	// (group commit) write transactions that arrive together share one: see
	// groupcommit.go.
	CommitEach bool
	// HeavyReadConns is how many read connections ReadHeavy may hold at once
	// (default ReadConns-1, at least 1): reads whose cost the user chooses
	// (catalogue search) never take every connection, so the desk, sign-in and
	// /healthz keep one.
	HeavyReadConns int
	// HeavyReadWait is how long ReadHeavy waits for a slot before it gives up
	// with ErrBusy (default 500 ms).
	HeavyReadWait time.Duration
	// NoStatementCache compiles every statement each time it runs instead of
	// keeping the recent ones compiled per connection (stmtcache.go); benchmarks
	// compare the two.
	NoStatementCache bool
	// WriteConns is the size of the write connection pool on PostgreSQL
	// (default 8); SQLite has one write connection. Writes are serialized across
	// servers by the write lock, so more connections mostly queue there; make
	// load's pool sweep (docs/load-results-postgres.md) chooses the default.
	WriteConns int
}

// DB is the library database.
type DB struct {
	path  string
	write *sql.DB
	read  *sql.DB

	engine Engine
	// rebind rewrites '?' placeholders for PostgreSQL; nil on SQLite.
	rebind *rebinder
	// plans makes PostgreSQL's prepared statements stale after another
	// server's migration (postgres.go); nil on SQLite.
	plans *planGeneration
	// pgcfg is PostgreSQL's connection configuration (Exclusive connects with
	// it); nil on SQLite.
	pgcfg *pgx.ConnConfig
	// alone holds Exclusive's lock connections between runs (exclusive.go),
	// at most maxAloneIdle, until Close sets aloneClosed; aloneMu guards both.
	aloneMu     sync.Mutex
	alone       []*pgx.Conn
	aloneClosed bool
	// readOpts are the options of a Read transaction.
	readOpts *sql.TxOptions
	// pgWrites and pgCommits count PostgreSQL's write transactions (CommitStats).
	pgWrites, pgCommits atomic.Int64

	// group is the group-commit writer; nil with Options.CommitEach.
	group *groupWriter

	// stmts counts the statement cache's hits and misses (stmtcache.go).
	stmts *stmtCounters

	// heavy holds a token per ReadHeavy running; heavyWait is how long one waits.
	heavy     chan struct{}
	heavyWait time.Duration

	// memos are what packages keep in memory for this database (Tx.Memo).
	memos memos

	// Now is the clock for everything date-related: due dates, fines, expiry.
	// Tests replace it.
	Now func() time.Time
}

// Open opens the library database: PostgreSQL when target is a postgres:// or
// postgresql:// URL, otherwise the SQLite file at target (created if need be).
// It does not migrate; call Migrate.
func Open(target string, opt Options) (*DB, error) {
	if IsPostgresURL(target) {
		return openPostgres(target, opt)
	}
	return openSQLite(target, opt)
}

func openSQLite(path string, opt Options) (*DB, error) {
	if path == "" || path == ":memory:" || strings.HasPrefix(path, "file::memory:") {
		return nil, fmt.Errorf("database path %q: a file path is required (an in-memory database is not shared between connections)", path)
	}
	if strings.Contains(path, "?") || strings.HasPrefix(path, "file:") {
		return nil, fmt.Errorf("database path %q: use a plain file path without '?' (and not a file: URI)", path)
	}
	opt = opt.withDefaults()
	switch strings.ToUpper(opt.Synchronous) {
	case "":
		opt.Synchronous = "FULL"
	case "FULL", "NORMAL", "EXTRA":
		opt.Synchronous = strings.ToUpper(opt.Synchronous)
	default:
		return nil, fmt.Errorf("synchronous %q: use FULL or NORMAL", opt.Synchronous)
	}
	if opt.BusyTimeout <= 0 {
		opt.BusyTimeout = 10 * time.Second
	}

	if !opt.ExistingFile {
		if err := makePrivate(path); err != nil {
			return nil, err
		}
	}

	var counters *stmtCounters
	if !opt.NoStatementCache {
		counters = &stmtCounters{}
	}
	w, err := openPool(dsn(path, opt, false), counters)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)
	// Make the file (and WAL mode) exist before readers connect, unless the
	// caller knows it does (a CGI request that may only read need not connect the
	// writer at all).
	if !opt.ExistingFile {
		if err := w.Ping(); err != nil {
			w.Close()
			return nil, fmt.Errorf("open %s: %w", path, err)
		}
	}

	r, err := openPool(dsn(path, opt, true), counters)
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	r.SetMaxOpenConns(opt.ReadConns)
	r.SetMaxIdleConns(opt.ReadConns)
	r.SetConnMaxIdleTime(0)
	r.SetConnMaxLifetime(0)

	d := &DB{path: path, write: w, read: r, stmts: counters, Now: time.Now,
		readOpts: &sql.TxOptions{ReadOnly: true},
		heavy:    make(chan struct{}, opt.HeavyReadConns), heavyWait: opt.HeavyReadWait}
	if !opt.CommitEach {
		d.group = newGroupWriter(d)
	}
	return d, nil
}

// withDefaults fills in the options both engines share.
func (opt Options) withDefaults() Options {
	if opt.ReadConns <= 0 {
		opt.ReadConns = 4
	}
	if opt.WriteConns <= 0 {
		opt.WriteConns = 8
	}
	if opt.HeavyReadConns <= 0 {
		opt.HeavyReadConns = max(1, opt.ReadConns-1)
	}
	if opt.HeavyReadWait <= 0 {
		opt.HeavyReadWait = 500 * time.Millisecond
	}
	return opt
}

// PrivateMode is the mode of the database file, its -wal and -shm files and its
// backups: they hold readers' personal data and the staff's sessions, for the
// Stacks user's eyes only.
const PrivateMode fs.FileMode = 0o600

// makePrivate creates the database file at path, empty, with PrivateMode, or takes
// group and other permissions away from an existing one and from its -wal and -shm
// files. SQLite creates a new database 0644 but gives -wal and -shm files the
// database file's own mode, so a private database keeps them private.
//
// A file owned by another user cannot have its mode changed; it is left as it
// is (whoever owns it keeps it private), rather than refused.
func makePrivate(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, PrivateMode)
	if err == nil {
		// SQLite takes an empty file for a new database.
		if err := f.Close(); err != nil {
			return fmt.Errorf("create %s: %w", path, err)
		}
		return nil
	}
	if !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("create %s: %w", path, err)
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		} else if err != nil {
			return fmt.Errorf("open %s: %w", p, err)
		}
		if perm := fi.Mode().Perm(); fi.Mode().IsRegular() && perm&0o077 != 0 {
			if err := os.Chmod(p, perm&^0o077); err != nil && !errors.Is(err, fs.ErrPermission) {
				return fmt.Errorf("make %s private: %w", p, err)
			}
		}
	}
	return nil
}

// openPool opens a pool of SQLite connections that keep their statements compiled
// (unless counters is nil).
func openPool(dsn string, counters *stmtCounters) (*sql.DB, error) {
	c, err := sqlite.NewConnector(dsn)
	if err != nil {
		return nil, err
	}
	if counters == nil {
		return sql.OpenDB(c), nil
	}
	return sql.OpenDB(cachingConnector{Connector: c, counters: counters}), nil
}

func dsn(path string, opt Options, readOnly bool) string {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", opt.BusyTimeout.Milliseconds()))
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous("+opt.Synchronous+")")
	q.Add("_pragma", "cache_size(-8000)")
	if readOnly {
		q.Add("_pragma", "query_only(1)")
	} else {
		q.Add("_pragma", "journal_mode(WAL)")
		q.Set("_txlock", "immediate")
	}
	// A plain file name, not a file: URI, so that "#" (which Go's test directories
	// contain) stays part of the name instead of starting a URI fragment.
	return path + "?" + q.Encode()
}

// Path returns the database file's path, or the PostgreSQL URL as given to Open
// (password included: use Name to show it).
func (db *DB) Path() string { return db.path }

// Name returns the database's file path, or its PostgreSQL URL without the
// password, for logs and messages.
func (db *DB) Name() string { return DisplayName(db.path) }

// Close closes both pools. A WAL checkpoint runs as the last connection closes.
func (db *DB) Close() error {
	if db.group != nil {
		db.group.close()
	}
	db.closeAlone()
	return errors.Join(db.read.Close(), db.write.Close())
}

// SetReadConns resizes the read pool (the load test sweeps it). The number of
// ReadHeavy slots (Options.HeavyReadConns) stays as opened.
func (db *DB) SetReadConns(n int) {
	db.read.SetMaxOpenConns(n)
	db.read.SetMaxIdleConns(n)
}

// ReadPoolStats reports the read pool's statistics, for metrics.
func (db *DB) ReadPoolStats() sql.DBStats { return db.read.Stats() }

// WritePoolStats reports the write connection's statistics, for metrics.
func (db *DB) WritePoolStats() sql.DBStats { return db.write.Stats() }

// Read runs fn in a read-only transaction: one consistent snapshot of the database.
// On PostgreSQL a read refused because another server's migration changed a
// table under a prepared statement runs once more (postgres.go): fn must, as a
// read, be safe to run again.
func (db *DB) Read(ctx context.Context, fn func(*Tx) error) error {
	err := db.run(ctx, db.read, db.readOpts, fn)
	if db.stalePlan(err) {
		err = db.run(ctx, db.read, db.readOpts, fn)
	}
	return err
}

// ErrBusy is what ReadHeavy returns when every slot for heavy reads stayed taken
// for Options.HeavyReadWait: the caller should say "busy, try again".
var ErrBusy = errors.New("db: every connection for heavy reads is busy")

// ReadHeavy is Read for reads whose cost the user chooses, such as a catalogue
// search: at most Options.HeavyReadConns of them run at once, so that they cannot
// hold every read connection and the desk's short reads (and /healthz) keep
// theirs. A call waits up to Options.HeavyReadWait for a slot, then returns
// ErrBusy. Bound its time with ctx: SQLite is interrupted at the deadline.
func (db *DB) ReadHeavy(ctx context.Context, fn func(*Tx) error) error {
	t := time.NewTimer(db.heavyWait)
	defer t.Stop()
	select {
	case db.heavy <- struct{}{}:
	case <-t.C:
		return ErrBusy
	case <-ctx.Done():
		return fmt.Errorf("wait for a heavy read slot: %w", ctx.Err())
	}
	defer func() { <-db.heavy }()
	return db.Read(ctx, fn)
}

// ErrHeavyBusy is ReadBounded's answer when every heavy-read slot stayed taken: a
// message staff can act on, with the ETOOMANY code (answered 503, Retry-After).
var ErrHeavyBusy = stacks.Errorf(stacks.ETOOMANY, "Many searches, reports and label sheets are running at once: try again in a moment.")

// ReadBounded runs fn, a read whose cost the user chooses (label sheets, standard
// reports and their CSV files, a stocktake's range, histories), as ReadHeavy does,
// within timeout: at the deadline SQLite is interrupted (PostgreSQL's statement
// cancelled) and the slot given back. It returns ErrHeavyBusy when every slot
// stayed taken, and tooLong (an error saying what to narrow) when the deadline
// passed; fn's own errors come back as they are.
func (db *DB) ReadBounded(ctx context.Context, timeout time.Duration, tooLong error, fn func(*Tx) error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err := db.ReadHeavy(ctx, fn)
	switch {
	case errors.Is(err, ErrBusy):
		return ErrHeavyBusy
	case err != nil && stacks.ErrorCode(err) == stacks.EINTERNAL && errors.Is(ctx.Err(), context.DeadlineExceeded):
		return tooLong
	}
	return err
}

// ReadOne runs fn, which reads with one statement, without a transaction: a
// single statement sees one consistent snapshot by itself, and the BEGIN and
// COMMIT around it cost as much as a short query. Every request does two such
// reads (its session and its staff user). fn must not Prepare.
func (db *DB) ReadOne(ctx context.Context, fn func(*Tx) error) error {
	start := time.Now()
	stats := StatsFrom(ctx)
	defer func() { stats.addTime(time.Since(start)) }()
	err := fn(&Tx{tx: db.read, ctx: ctx, now: db.Now().UTC().Truncate(time.Second), stats: stats, single: true, rebind: db.rebind, memos: &db.memos})
	if db.stalePlan(err) {
		err = fn(&Tx{tx: db.read, ctx: ctx, now: db.Now().UTC().Truncate(time.Second), stats: stats, single: true, rebind: db.rebind, memos: &db.memos})
	}
	return err
}

// Write runs fn in a write transaction and commits it if fn returns nil. Writes are
// serialized: one runs at a time.
//
// With group commit (the default), transactions that arrive while another commits
// are run one after the other inside one SQLite transaction, each in its own
// savepoint, and committed together: each call still returns only after its work
// is durably committed, and a failing fn undoes only its own work.
//
// On PostgreSQL the same: a batch is one transaction that first takes the write
// lock serializing every server's writes (see the package documentation), and
// with CommitEach each call is its own such transaction. fn runs once, as on
// SQLite.
func (db *DB) Write(ctx context.Context, fn func(*Tx) error) error {
	if db.group != nil {
		return db.group.write(ctx, fn)
	}
	if db.rebind != nil {
		return db.writePostgres(ctx, fn)
	}
	return db.run(ctx, db.write, nil, fn)
}

func (db *DB) run(ctx context.Context, pool *sql.DB, opts *sql.TxOptions, fn func(*Tx) error) (err error) {
	start := time.Now()
	stats := StatsFrom(ctx)
	defer func() { stats.addTime(time.Since(start)) }()

	sqltx, err := pool.BeginTx(ctx, opts)
	if err != nil {
		return fmt.Errorf("begin transaction: %w", err)
	}
	tx := &Tx{tx: sqltx, ctx: ctx, now: db.Now().UTC().Truncate(time.Second), stats: stats, rebind: db.rebind}
	if pool == db.read {
		tx.memos = &db.memos
	}
	defer func() {
		if p := recover(); p != nil {
			sqltx.Rollback()
			panic(p)
		}
	}()
	if err := fn(tx); err != nil {
		sqltx.Rollback()
		return err
	}
	if err := sqltx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// Tx is a transaction. Its Exec, Query and QueryRow count statements for the
// request's Server-Timing header; Now is the clock reading taken when the
// transaction began, so that every row it writes carries the same time.
type Tx struct {
	tx    queryer
	ctx   context.Context
	now   time.Time
	stats *Stats
	// single: not a transaction but ReadOne's pool.
	single bool
	// rebind rewrites placeholders for PostgreSQL; nil on SQLite.
	rebind *rebinder
	// memos are the database's (Tx.Memo); nil in a write transaction.
	memos *memos
}

// sql returns query as the engine takes it: as written on SQLite, with $n
// placeholders on PostgreSQL.
func (tx *Tx) sql(query string) string {
	if tx.rebind == nil {
		return query
	}
	return tx.rebind.get(query)
}

// args returns args as the engine takes them. SQLite stores a Go bool as the
// integer 1 or 0, which is what the schema's flag columns hold; PostgreSQL's
// driver refuses a bool for an integer column, so on PostgreSQL a bool becomes
// 1 or 0 here, once, for every statement (the slice is copied only when it holds
// a bool or a string PostgreSQL cannot take).
//
// PostgreSQL's text holds neither a NUL nor bytes that are not UTF-8, and the
// server refuses a statement whose argument has one ("invalid byte sequence"),
// where SQLite looks it up and finds nothing. Such a string (typed or pasted
// into a form: no stored text can equal it) becomes errBadText, whose error is
// the statement's: EINVALID, a message for the person who typed it, not a 500.
func (tx *Tx) args(args []any) []any {
	if len(args) > 0 && args[0] == PlanEach {
		if tx.rebind == nil {
			return args[1:]
		}
		// pgx takes a QueryExecMode as a statement's first argument.
		return append([]any{pgx.QueryExecModeExec}, intBools(args[1:])...)
	}
	if tx.rebind == nil {
		return args
	}
	return intBools(args)
}

// PlanEach, given as a statement's first argument (before the statement's
// own), has PostgreSQL plan the statement for its arguments each time it runs,
// as an unnamed statement (pgx's QueryExecModeExec), instead of running the
// connection's prepared statement, whose plan PostgreSQL makes once for any
// arguments after five runs. It is for a statement whose best plan depends on
// its arguments: a search's first read of its words' matches, where the
// matches of a word in half the catalogue are read best by walking the records
// backwards and stopping at the count's limit, and a rare word's through its
// index. The price is planning the statement at every run (a fraction of a
// millisecond for a search's). SQLite plans each statement without the
// arguments' values, and the mark is dropped there.
var PlanEach any = planEach{}

type planEach struct{}

func intBools(args []any) []any {
	var out []any
	for i, a := range args {
		if s, ok := a.(string); ok {
			if utf8.ValidString(s) && strings.IndexByte(s, 0) < 0 {
				continue
			}
			if out == nil {
				out = append([]any(nil), args...)
			}
			out[i] = errBadText{}
			continue
		}
		b, ok := a.(bool)
		if !ok {
			continue
		}
		if out == nil {
			out = append([]any(nil), args...)
		}
		out[i] = int64(0)
		if b {
			out[i] = int64(1)
		}
	}
	if out == nil {
		return args
	}
	return out
}

// errBadText stands for a string argument PostgreSQL cannot take (a NUL, or
// bytes that are not UTF-8): pgx asks it for its value, and the error it gets
// is the statement's (pgx wraps it with %w).
type errBadText struct{}

// Value refuses the argument.
func (errBadText) Value() (driver.Value, error) {
	return nil, stacks.Errorf(stacks.EINVALID, "The text holds characters that are not text (a NUL, or bytes that are not UTF-8): type it again.")
}

// queryer is a transaction, or the read pool itself for ReadOne.
type queryer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	PrepareContext(ctx context.Context, query string) (*sql.Stmt, error)
}

// Context returns the context the transaction runs under.
func (tx *Tx) Context() context.Context { return tx.ctx }

// Now returns the time the transaction began, in UTC, to the second.
func (tx *Tx) Now() time.Time { return tx.now }

// Exec runs a statement that returns no rows.
func (tx *Tx) Exec(query string, args ...any) (sql.Result, error) {
	tx.stats.addStatement(query)
	return tx.tx.ExecContext(tx.ctx, tx.sql(query), tx.args(args)...)
}

// Query runs a statement that returns rows.
func (tx *Tx) Query(query string, args ...any) (*sql.Rows, error) {
	tx.stats.addStatement(query)
	return tx.tx.QueryContext(tx.ctx, tx.sql(query), tx.args(args)...)
}

// QueryRow runs a statement that returns at most one row.
func (tx *Tx) QueryRow(query string, args ...any) *sql.Row {
	tx.stats.addStatement(query)
	return tx.tx.QueryRowContext(tx.ctx, tx.sql(query), tx.args(args)...)
}

// IDs runs a query that selects one integer column (ids) and returns its values
// in order.
func (tx *Tx) IDs(query string, args ...any) ([]int64, error) {
	rows, err := tx.Query(query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// InsertID runs an INSERT that ends in RETURNING id and returns the id: the
// portable form of Result.LastInsertId, which PostgreSQL's driver lacks. Both
// engines support RETURNING.
func (tx *Tx) InsertID(query string, args ...any) (int64, error) {
	var id int64
	if err := tx.QueryRow(query, args...).Scan(&id); err != nil {
		return 0, err
	}
	return id, nil
}

// Stmt is a statement prepared inside a transaction, for bulk work (imports) that
// runs the same SQL many times; each execution counts as a statement.
type Stmt struct {
	st    *sql.Stmt
	tx    *Tx
	query string
}

// Prepare prepares query for repeated use inside the transaction. It is closed
// with the transaction.
func (tx *Tx) Prepare(query string) (*Stmt, error) {
	if tx.single {
		return nil, errors.New("db: Prepare inside ReadOne (use Read)")
	}
	st, err := tx.tx.PrepareContext(tx.ctx, tx.sql(query))
	if err != nil {
		return nil, err
	}
	return &Stmt{st: st, tx: tx, query: query}, nil
}

// Exec runs the prepared statement.
func (s *Stmt) Exec(args ...any) (sql.Result, error) {
	s.tx.stats.addStatement(s.query)
	return s.st.ExecContext(s.tx.ctx, s.tx.args(args)...)
}

// QueryRow runs the prepared statement for at most one row.
func (s *Stmt) QueryRow(args ...any) *sql.Row {
	s.tx.stats.addStatement(s.query)
	return s.st.QueryRowContext(s.tx.ctx, s.tx.args(args)...)
}
