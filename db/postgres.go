package db

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/stacks-ils/stacks"
)

// PostgreSQL. The same *sql.DB-based plumbing as SQLite's, through pgx's
// database/sql driver, so the domain packages keep scanning *sql.Rows:
//
//   - two pools, reads (Options.ReadConns) and writes (Options.WriteConns);
//   - reads are REPEATABLE READ READ ONLY transactions (one snapshot, as on
//     SQLite), ReadOne a single statement on the read pool;
//   - every write transaction first takes the write lock, a transaction-scoped
//     advisory lock (writeLockKey) that orders writes across all servers (the
//     package documentation says why not SERIALIZABLE); migrations take it too;
//   - '?' placeholders are rewritten as $n once per distinct statement
//     (engine.go); pgx keeps each connection's statements prepared (its
//     statement cache plays the part of stmtcache.go, whose counters stay 0);
//   - no group commit: PostgreSQL commits each transaction itself.

// writeLockKey is the advisory lock every write transaction holds until it ends.
// Any constant does, as long as every Stacks server uses the same one; this one
// spells "stacks" in ASCII.
const writeLockKey = 0x737461636b73

// openPostgres opens the two pools on the database at the URL target.
func openPostgres(target string, opt Options) (*DB, error) {
	opt = opt.withDefaults()
	name := DisplayName(target)
	cfg, err := pgx.ParseConfig(target)
	if err != nil {
		return nil, fmt.Errorf("database URL %s: %v (expected postgres://user:password@host:port/database)", name, err)
	}
	if _, ok := cfg.RuntimeParams["application_name"]; !ok {
		cfg.RuntimeParams["application_name"] = "stacks"
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = 10 * time.Second
	}
	if opt.NoStatementCache {
		cfg.DefaultQueryExecMode = pgx.QueryExecModeExec
	}
	plans := &planGeneration{}
	connector := stdlib.GetConnector(*cfg, stdlib.OptionAfterConnect(plans.afterConnect),
		stdlib.OptionResetSession(plans.resetSession))
	w := sql.OpenDB(connector)
	w.SetMaxOpenConns(opt.WriteConns)
	w.SetMaxIdleConns(opt.WriteConns)
	r := sql.OpenDB(connector)
	r.SetMaxOpenConns(opt.ReadConns)
	r.SetMaxIdleConns(opt.ReadConns)
	for _, p := range []*sql.DB{w, r} {
		p.SetConnMaxIdleTime(5 * time.Minute)
		p.SetConnMaxLifetime(time.Hour)
	}
	if !opt.ExistingFile {
		ctx, cancel := context.WithTimeout(context.Background(), cfg.ConnectTimeout+time.Second)
		defer cancel()
		if err := r.PingContext(ctx); err != nil {
			w.Close()
			r.Close()
			return nil, fmt.Errorf("connect to PostgreSQL at %s: %v (is the server running and the URL right? scripts/pg.sh start runs a throwaway one for tests)", name, err)
		}
	}
	d := &DB{path: target, write: w, read: r, engine: Postgres, rebind: newRebinder(), plans: plans, pgcfg: cfg,
		readOpts: &sql.TxOptions{ReadOnly: true, Isolation: sql.LevelRepeatableRead},
		stmts:    nil, Now: time.Now,
		heavy: make(chan struct{}, opt.HeavyReadConns), heavyWait: opt.HeavyReadWait}
	// Group commit, as on SQLite: the write lock is held from one commit to
	// the next, so without it every write would wait for the one before it
	// to be flushed; a batch takes the lock once and is flushed once.
	if !opt.CommitEach {
		d.group = newGroupWriter(d)
	}
	return d, nil
}

// connectAlone opens a connection of its own to the database, outside the
// pools (Exclusive's lock).
func (db *DB) connectAlone(ctx context.Context) (*pgx.Conn, error) {
	return pgx.ConnectConfig(ctx, db.pgcfg.Copy())
}

// DisplayName returns a --db target fit for a log or a message: a SQLite path as
// it is, a PostgreSQL URL without its password.
func DisplayName(target string) string {
	if !IsPostgresURL(target) {
		return target
	}
	u, err := url.Parse(target)
	if err != nil {
		// Say nothing of a URL that does not parse: it may hold a password.
		return "postgres://(a URL that does not parse)"
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	q := u.Query()
	if q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// writePostgres runs fn in a transaction of its own that holds the write lock
// (Options.CommitEach; by default the group writer runs a batch of writes in
// one such transaction).
func (db *DB) writePostgres(ctx context.Context, fn func(*Tx) error) error {
	db.pgWrites.Add(1)
	err := db.run(ctx, db.write, nil, func(tx *Tx) error {
		if _, err := tx.tx.ExecContext(tx.ctx, lockStatement); err != nil {
			return fmt.Errorf("wait for the write lock: %w", err)
		}
		return fn(tx)
	})
	if err == nil {
		db.pgCommits.Add(1)
	} else if db.stalePlan(err) {
		return errStalePlanWrite(err)
	}
	return err
}

// Prepared statements after another server's migration. pgx keeps each
// connection's statements prepared on the server. When another server migrates
// the database and a table's columns change, PostgreSQL refuses to run a
// prepared statement whose result would now have other columns ("cached plan
// must not change result type", SQLSTATE 0A000), once per statement and
// connection, and the transaction fails. So the first such refusal moves a
// generation on and every connection of this server drops its prepared
// statements when it is next handed out (pgx prepares them again as they are
// used); the read that was refused runs again at once (a read has nothing to
// undo); a write is not run twice (its function may not be safe to run again:
// see the package documentation) and fails with a message saying to try again.

// planGeneration counts the refusals that made every connection's prepared
// statements stale.
type planGeneration struct{ n atomic.Uint64 }

// planGenKey is where a connection keeps the generation its statements date
// from (pgconn's CustomData).
const planGenKey = "stacks.planGeneration"

// afterConnect records that a new connection's statements (none yet) are of
// the current generation.
func (g *planGeneration) afterConnect(ctx context.Context, c *pgx.Conn) error {
	c.PgConn().CustomData()[planGenKey] = g.n.Load()
	return nil
}

// resetSession runs as database/sql hands out a connection used before: it
// drops the connection's prepared statements when they are older than the
// generation.
func (g *planGeneration) resetSession(ctx context.Context, c *pgx.Conn) error {
	want := g.n.Load()
	data := c.PgConn().CustomData()
	if have, _ := data[planGenKey].(uint64); have >= want {
		return nil
	}
	if err := c.DeallocateAll(ctx); err != nil {
		return driver.ErrBadConn
	}
	data[planGenKey] = want
	return nil
}

// stalePlan reports whether err is PostgreSQL refusing a prepared statement
// whose result changed under it; if so every connection's statements are made
// stale.
func (db *DB) stalePlan(err error) bool {
	if db.plans == nil || pgCode(err) != "0A000" || !strings.Contains(err.Error(), "cached plan must not change result type") {
		return false
	}
	db.plans.n.Add(1)
	return true
}

// errStalePlanWrite is a write refused for a prepared statement made stale by
// another server's migration: the statements are prepared again for the next
// try.
func errStalePlanWrite(err error) error {
	return fmt.Errorf("%w (%v)", stacks.Errorf(stacks.ECONFLICT,
		"The database was just upgraded by another server and this change was not saved; please try again."), err)
}

// lockStatement takes the write lock until the transaction ends. It has no
// arguments, so pgx sends it in one round trip without preparing it.
var lockStatement = fmt.Sprintf("SELECT pg_advisory_xact_lock(%d)", writeLockKey)

// migratePostgres applies PostgreSQL's migrations: each in its own transaction,
// holding the write lock, so that two servers starting at once neither apply
// one twice nor run one beside a write.
func (db *DB) migratePostgres(ctx context.Context, ms []Migration) (int, error) {
	var current, count int
	err := db.read.QueryRowContext(ctx, `SELECT coalesce(max(version), 0), count(*) FROM schema_migrations`).Scan(&current, &count)
	if err != nil && pgCode(err) != "42P01" { // undefined_table: a new database
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	if n := len(ms); n > 0 && current > ms[n-1].Version {
		return 0, fmt.Errorf("the database is at schema version %d, newer than this program knows (%d): use a newer stacks binary", current, ms[n-1].Version)
	}
	// Up to date: one query. A database missing a version below its newest
	// goes through the loop below, which fills the gap.
	if err == nil && len(ms) > 0 && current == ms[len(ms)-1].Version && count == current {
		return 0, nil
	}
	applied := 0
	for _, m := range ms {
		did, err := db.migrateOnePostgres(ctx, m)
		if err != nil {
			return applied, fmt.Errorf("migration postgres/%s: %w", m.Name, err)
		}
		if did {
			applied++
		}
	}
	return applied, nil
}

// migrateOnePostgres applies m unless the database has every version it records.
func (db *DB) migrateOnePostgres(ctx context.Context, m Migration) (applied bool, err error) {
	sqltx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("begin transaction: %w", err)
	}
	defer sqltx.Rollback()
	if _, err := sqltx.ExecContext(ctx, lockStatement); err != nil {
		return false, fmt.Errorf("wait for the write lock: %w", err)
	}
	if _, err := sqltx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version integer PRIMARY KEY, name text NOT NULL, applied_at text NOT NULL)`); err != nil {
		return false, fmt.Errorf("create schema_migrations: %w", err)
	}
	var have int
	if err := sqltx.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations WHERE version BETWEEN $1 AND $2`,
		m.From, m.Version).Scan(&have); err != nil {
		return false, fmt.Errorf("read schema versions: %w", err)
	}
	if have == m.Version-m.From+1 {
		return false, nil
	}
	if have != 0 {
		return false, fmt.Errorf("the database has %d of versions %d to %d, which this migration creates together; it was not made by stacks", have, m.From, m.Version)
	}
	if _, err := sqltx.ExecContext(ctx, m.SQL); err != nil {
		return false, err
	}
	now := FormatTime(db.Now())
	for v := m.From; v <= m.Version; v++ {
		if _, err := sqltx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)`,
			v, m.Name, now); err != nil {
			return false, err
		}
	}
	if err := sqltx.Commit(); err != nil {
		return false, fmt.Errorf("commit: %w", err)
	}
	return true, nil
}

// checkPostgres is Check's PostgreSQL counterpart. PostgreSQL enforces foreign
// keys and constraints on every statement, so there is no foreign_key_check to
// run; what can still be wrong is an index left invalid (a CREATE INDEX
// CONCURRENTLY that failed) or a constraint added NOT VALID and never
// validated: rows written before it may break it. Pages and checksums are the
// server's business (amcheck, data checksums), outside what stacks check says.
func checkPostgres(tx *Tx) ([]stacks.Violation, error) {
	return Violations(tx, []Invariant{
		{Name: "index-valid", Query: `SELECT 'index ' || c.relname || ' on ' || t.relname || ' is invalid or not ready: rebuild it (REINDEX INDEX ' || c.relname || ')'
			FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_class t ON t.oid = i.indrelid
			JOIN pg_namespace n ON n.oid = c.relnamespace
			WHERE n.nspname = current_schema() AND NOT (i.indisvalid AND i.indisready)
			ORDER BY c.relname`},
		{Name: "constraint-validated", Query: `SELECT 'constraint ' || c.conname || ' on ' || t.relname || ' was never validated: run ALTER TABLE ' || t.relname || ' VALIDATE CONSTRAINT ' || c.conname
			FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid
			JOIN pg_namespace n ON n.oid = t.relnamespace
			WHERE n.nspname = current_schema() AND NOT c.convalidated
			ORDER BY c.conname`},
	})
}

// errNoPgDump is Backup's answer on PostgreSQL where pg_dump is not installed.
var errNoPgDump = errors.New("backup of a PostgreSQL database runs pg_dump, which is not installed here: install PostgreSQL's client programs (Debian: apt-get install postgresql-client) or back up with the server's own tools (pg_basebackup, a standby)")

// pgEnv returns the PG* environment variables that give pg_dump the database of
// target without its password on the command line (where ps shows it).
func pgEnv(target string) ([]string, error) {
	cfg, err := pgx.ParseConfig(target)
	if err != nil {
		return nil, fmt.Errorf("database URL %s: %v", DisplayName(target), err)
	}
	env := []string{
		"PGHOST=" + cfg.Host,
		fmt.Sprintf("PGPORT=%d", cfg.Port),
		"PGUSER=" + cfg.User,
		"PGDATABASE=" + cfg.Database,
	}
	if cfg.Password != "" {
		env = append(env, "PGPASSWORD="+cfg.Password)
	}
	if cfg.TLSConfig == nil {
		env = append(env, "PGSSLMODE=disable")
	} else if strings.Contains(target, "sslmode=") {
		u, _ := url.Parse(target)
		if u != nil {
			env = append(env, "PGSSLMODE="+u.Query().Get("sslmode"))
		}
	}
	return env, nil
}
