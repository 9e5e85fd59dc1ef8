package db

import (
	"container/list"
	"context"
	"database/sql/driver"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
)

// The statement cache. SQLite compiles every statement before it runs it, and in
// this pure-Go SQLite compiling is a large part of a desk request's CPU: the same
// few dozen statements run again and again. Each connection therefore keeps its
// most recently used statements compiled, keyed by their SQL text, and runs them
// again with new arguments. SQLite recompiles a kept statement by itself when the
// schema changes under it.
//
// The cache sits between database/sql and the driver: database/sql hands every
// Exec and Query on a connection to the connection's ExecContext and
// QueryContext, which look the SQL up here. A statement whose rows are still
// being read is busy; running the same SQL again meanwhile (a nested query) takes
// a one-off statement instead.

// stmtCacheSize is how many statements each connection keeps compiled.
const stmtCacheSize = 128

// StmtCacheStats counts the statements run from the cache (hits) and compiled for
// it (misses) on all connections since Open.
type StmtCacheStats struct {
	Hits, Misses int64
}

type stmtCounters struct{ hits, misses atomic.Int64 }

// StmtCacheStats reports the statement cache's hits and misses.
func (db *DB) StmtCacheStats() StmtCacheStats {
	if db.stmts == nil {
		return StmtCacheStats{}
	}
	return StmtCacheStats{Hits: db.stmts.hits.Load(), Misses: db.stmts.misses.Load()}
}

// cachingConnector opens driver connections that keep a statement cache.
type cachingConnector struct {
	driver.Connector
	counters *stmtCounters
}

func (c cachingConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return newCachingConn(conn, c.counters)
}

// sqliteConn is what every connection of the SQLite driver implements; the
// wrapper forwards all of it, so that database/sql sees the same abilities.
type sqliteConn interface {
	driver.Conn
	driver.ConnBeginTx
	driver.ConnPrepareContext
	driver.ExecerContext
	driver.QueryerContext
	driver.Pinger
	driver.SessionResetter
	driver.Validator
}

type cachedStmt struct {
	sql   string
	stmt  driver.Stmt
	busy  bool // rows are being read from it
	gone  bool // evicted while busy: close when its rows close
	entry *list.Element
}

type cachingConn struct {
	sqliteConn
	counters *stmtCounters

	mu    sync.Mutex
	stmts map[string]*cachedStmt
	lru   *list.List // of *cachedStmt, most recently used first
}

func newCachingConn(conn driver.Conn, counters *stmtCounters) (driver.Conn, error) {
	sc, ok := conn.(sqliteConn)
	if !ok {
		conn.Close()
		return nil, errors.New("the SQLite driver's connection lacks an interface the statement cache forwards")
	}
	return &cachingConn{sqliteConn: sc, counters: counters, stmts: map[string]*cachedStmt{}, lru: list.New()}, nil
}

// Unwrap returns the driver's own connection.
func (c *cachingConn) Unwrap() driver.Conn { return c.sqliteConn }

// cacheable reports whether a statement is worth keeping: the queries and changes
// the domain packages run, not transaction control (savepoints are named per
// batch) nor scripts such as migrations.
func cacheable(query string) bool {
	q := strings.TrimLeft(query, " \t\r\n")
	if len(q) < 6 || len(q) > 8192 {
		return false
	}
	switch strings.ToUpper(q[:6]) {
	case "SELECT", "INSERT", "UPDATE", "DELETE", "REPLAC":
		return true
	}
	return strings.EqualFold(q[:5], "WITH ") || strings.EqualFold(q[:5], "WITH\n")
}

// take returns the cached statement for query, compiling and keeping it if need
// be, and marks it busy; nil (and no error) when the SQL is not cached or its
// statement is busy.
func (c *cachingConn) take(ctx context.Context, query string) (*cachedStmt, error) {
	if !cacheable(query) {
		return nil, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if cs, ok := c.stmts[query]; ok {
		if cs.busy {
			return nil, nil
		}
		c.counters.hits.Add(1)
		c.lru.MoveToFront(cs.entry)
		cs.busy = true
		return cs, nil
	}
	st, err := c.sqliteConn.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	c.counters.misses.Add(1)
	cs := &cachedStmt{sql: query, stmt: st, busy: true}
	cs.entry = c.lru.PushFront(cs)
	c.stmts[query] = cs
	for c.lru.Len() > stmtCacheSize {
		old := c.lru.Remove(c.lru.Back()).(*cachedStmt)
		delete(c.stmts, old.sql)
		if old.busy {
			old.gone = true
		} else {
			old.stmt.Close()
		}
	}
	return cs, nil
}

// release marks a statement free again (closing it if it was evicted meanwhile).
func (c *cachingConn) release(cs *cachedStmt) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cs.busy = false
	if cs.gone {
		cs.stmt.Close()
	}
}

func (c *cachingConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	cs, err := c.take(ctx, query)
	if err != nil {
		return nil, err
	}
	if cs == nil {
		return c.sqliteConn.ExecContext(ctx, query, args)
	}
	defer c.release(cs)
	return cs.stmt.(driver.StmtExecContext).ExecContext(ctx, args)
}

func (c *cachingConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	cs, err := c.take(ctx, query)
	if err != nil {
		return nil, err
	}
	if cs == nil {
		return c.sqliteConn.QueryContext(ctx, query, args)
	}
	rows, err := cs.stmt.(driver.StmtQueryContext).QueryContext(ctx, args)
	if err != nil {
		c.release(cs)
		return nil, err
	}
	return &cachedRows{Rows: rows, conn: c, stmt: cs}, nil
}

// Close closes the kept statements, then the connection.
func (c *cachingConn) Close() error {
	c.mu.Lock()
	var errs []error
	for _, cs := range c.stmts {
		errs = append(errs, cs.stmt.Close())
	}
	c.stmts = nil
	c.lru.Init()
	c.mu.Unlock()
	return errors.Join(append(errs, c.sqliteConn.Close())...)
}

// cachedRows frees its statement for the next run when closed.
type cachedRows struct {
	driver.Rows
	conn   *cachingConn
	stmt   *cachedStmt
	closed bool
}

func (r *cachedRows) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	err := r.Rows.Close()
	r.conn.release(r.stmt)
	return err
}
