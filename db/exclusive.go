package db

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"sync"

	"github.com/jackc/pgx/v5"
)

// Exclusive runs fn unless another process on the database is running work of
// the same name, and reports whether it ran fn. It is for background work that
// every server starts on its own timer and that must run on one at a time (the
// daily jobs and notices: see notices.Scheduler); a server that finds it taken
// leaves it to the one running it. It never waits.
//
// On PostgreSQL it is a session advisory lock (pg_try_advisory_lock) on a
// connection of its own, outside the pools, so fn has every pooled connection
// for its own transactions; PostgreSQL releases it when fn returns or when this
// process dies (a SIGKILLed server leaves no lock behind). The connection is
// kept, idle and holding nothing, for the next call (the scheduler's tick is
// once a minute): a new connection is a new server process, about 40 ms of
// PostgreSQL's CPU on the test machine, and notices' tests tick hundreds of
// times (docs/performance.md, "The test suite"). Should that connection break
// while fn runs, the lock is gone and another server may start the same work: it
// must, as the daily work is, be safe to run twice. On SQLite one process serves
// the database and the lock is this process's, per database file and name.
func (db *DB) Exclusive(ctx context.Context, name string, fn func(context.Context) error) (ran bool, err error) {
	if db.pgcfg == nil {
		return exclusiveInProcess(ctx, db.path+"\x00"+name, fn)
	}
	key := exclusiveKey(name)
	c, ran, err := db.tryLock(ctx, key)
	if err != nil {
		return false, fmt.Errorf("take the %s lock: %w", name, err)
	}
	if !ran {
		db.putAlone(c)
		return false, nil
	}
	fnErr := fn(ctx)
	var released bool
	err = c.QueryRow(context.Background(), `SELECT pg_advisory_unlock($1)`, key).Scan(&released)
	if err == nil && !released {
		err = errors.New("it was no longer held")
	}
	if err != nil {
		// Closing the connection releases it all the same.
		c.Close(context.Background())
		return true, errors.Join(fnErr, fmt.Errorf("release the %s lock: %w", name, err))
	}
	db.putAlone(c)
	return true, fnErr
}

// maxAloneIdle is how many lock connections Exclusive keeps between runs: one
// for each kind of work that may run at once (the daily jobs, the notices).
const maxAloneIdle = 2

// tryLock takes the advisory lock key on a kept connection, or on a new one
// when none is kept or the kept one no longer works (its server process ended,
// say), and returns the connection with whether the lock was taken.
func (db *DB) tryLock(ctx context.Context, key int64) (*pgx.Conn, bool, error) {
	var ran bool
	if c := db.takeAlone(); c != nil {
		if err := c.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, key).Scan(&ran); err == nil {
			return c, ran, nil
		}
		c.Close(context.Background())
		if ctx.Err() != nil {
			return nil, false, ctx.Err()
		}
	}
	c, err := db.connectAlone(ctx)
	if err != nil {
		return nil, false, fmt.Errorf("connect: %w", err)
	}
	if err := c.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, key).Scan(&ran); err != nil {
		c.Close(context.Background())
		return nil, false, err
	}
	return c, ran, nil
}

// takeAlone returns a kept lock connection, or nil.
func (db *DB) takeAlone() *pgx.Conn {
	db.aloneMu.Lock()
	defer db.aloneMu.Unlock()
	n := len(db.alone)
	if n == 0 {
		return nil
	}
	c := db.alone[n-1]
	db.alone = db.alone[:n-1]
	return c
}

// putAlone keeps c, which holds no lock, for the next Exclusive, or closes it
// when enough are kept or it is broken.
func (db *DB) putAlone(c *pgx.Conn) {
	if c.IsClosed() {
		return
	}
	db.aloneMu.Lock()
	if !db.aloneClosed && len(db.alone) < maxAloneIdle {
		db.alone = append(db.alone, c)
		c = nil
	}
	db.aloneMu.Unlock()
	if c != nil {
		c.Close(context.Background())
	}
}

// closeAlone closes the kept lock connections (Close).
func (db *DB) closeAlone() {
	db.aloneMu.Lock()
	kept := db.alone
	db.alone = nil
	db.aloneClosed = true
	db.aloneMu.Unlock()
	for _, c := range kept {
		c.Close(context.Background())
	}
}

// exclusiveKey is the advisory lock key for name: a hash, in the bigint key
// space (the write lock is writeLockKey there).
func exclusiveKey(name string) int64 {
	h := fnv.New64a()
	h.Write([]byte("stacks exclusive " + name))
	return int64(h.Sum64())
}

var (
	inProcessMu    sync.Mutex
	inProcessTaken = map[string]bool{}
)

func exclusiveInProcess(ctx context.Context, key string, fn func(context.Context) error) (bool, error) {
	inProcessMu.Lock()
	if inProcessTaken[key] {
		inProcessMu.Unlock()
		return false, nil
	}
	inProcessTaken[key] = true
	inProcessMu.Unlock()
	defer func() {
		inProcessMu.Lock()
		delete(inProcessTaken, key)
		inProcessMu.Unlock()
	}()
	return true, fn(ctx)
}
