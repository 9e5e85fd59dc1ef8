package db

import (
	"context"
	"strings"
	"sync/atomic"
	"time"
)

// Stats counts what one request (or one SIP message) asked of the database: the
// number of SQL statements, by kind, and the time spent inside transactions. The web
// layer reports them in the Server-Timing header.
type Stats struct {
	statements atomic.Int64
	selects    atomic.Int64
	inserts    atomic.Int64
	updates    atomic.Int64
	deletes    atomic.Int64
	nanos      atomic.Int64
}

type statsKey struct{}

// WithStats returns a context that counts database work into a new Stats.
func WithStats(ctx context.Context) (context.Context, *Stats) {
	s := new(Stats)
	return context.WithValue(ctx, statsKey{}, s), s
}

// StatsFrom returns the Stats of ctx, or nil; a nil *Stats counts nothing.
func StatsFrom(ctx context.Context) *Stats {
	s, _ := ctx.Value(statsKey{}).(*Stats)
	return s
}

// Statements returns how many SQL statements ran (BEGIN and COMMIT not counted).
func (s *Stats) Statements() int64 {
	if s == nil {
		return 0
	}
	return s.statements.Load()
}

// Kinds returns the statement counts by kind: select, insert, update, delete.
func (s *Stats) Kinds() (selects, inserts, updates, deletes int64) {
	if s == nil {
		return
	}
	return s.selects.Load(), s.inserts.Load(), s.updates.Load(), s.deletes.Load()
}

// Duration returns the time spent inside transactions, from BEGIN to the end of
// COMMIT (which includes the durable commit's fsync).
func (s *Stats) Duration() time.Duration {
	if s == nil {
		return 0
	}
	return time.Duration(s.nanos.Load())
}

func (s *Stats) addTime(d time.Duration) {
	if s != nil {
		s.nanos.Add(int64(d))
	}
}

func (s *Stats) addStatement(query string) {
	if s == nil {
		return
	}
	s.statements.Add(1)
	switch statementKind(query) {
	case "select":
		s.selects.Add(1)
	case "insert":
		s.inserts.Add(1)
	case "update":
		s.updates.Add(1)
	case "delete":
		s.deletes.Add(1)
	}
}

// statementKind returns the lower-case first keyword of a statement, treating a
// WITH ... SELECT as a select.
func statementKind(query string) string {
	q := strings.TrimLeft(query, " \t\r\n(")
	end := strings.IndexAny(q, " \t\r\n(")
	if end < 0 {
		end = len(q)
	}
	switch w := strings.ToLower(q[:end]); w {
	case "with":
		return "select"
	default:
		return w
	}
}
