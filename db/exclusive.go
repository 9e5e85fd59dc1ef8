package db

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"sync"
)

// Exclusive runs fn unless another process on the database is running work of
// the same name, and reports whether it ran fn. It is for background work that
// every server starts on its own timer and that must run on one at a time (the
// daily jobs and notices: see notices.Scheduler); a server that finds it taken
// leaves it to the one running it. It never waits.
//
// On PostgreSQL it is a session advisory lock (pg_try_advisory_lock) on a
// connection of its own, opened for fn's duration and outside the pools, so fn
// has every pooled connection for its own transactions; PostgreSQL releases it
// when fn returns or when this process dies (a SIGKILLed server leaves no lock
// behind). Should that connection break while fn runs, the lock is gone and
// another server may start the same work: it must, as the daily work is, be safe
// to run twice. On SQLite one process serves the database and the lock is this
// process's, per database file and name.
func (db *DB) Exclusive(ctx context.Context, name string, fn func(context.Context) error) (ran bool, err error) {
	if db.pgcfg == nil {
		return exclusiveInProcess(ctx, db.path+"\x00"+name, fn)
	}
	key := exclusiveKey(name)
	c, err := db.connectAlone(ctx)
	if err != nil {
		return false, fmt.Errorf("connect for the %s lock: %w", name, err)
	}
	defer c.Close(context.Background())
	if err := c.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, key).Scan(&ran); err != nil {
		return false, fmt.Errorf("take the %s lock: %w", name, err)
	}
	if !ran {
		return false, nil
	}
	fnErr := fn(ctx)
	var released bool
	err = c.QueryRow(context.Background(), `SELECT pg_advisory_unlock($1)`, key).Scan(&released)
	if err == nil && !released {
		err = errors.New("it was no longer held")
	}
	if err != nil {
		// Closing the connection (deferred) releases it all the same.
		err = fmt.Errorf("release the %s lock: %w", name, err)
	}
	return true, errors.Join(fnErr, err)
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
