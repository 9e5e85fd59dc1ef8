package db

import (
	"context"
	"fmt"
	"sync"
)

// Cache versions. A process may keep database state in memory (the
// preferences, read by nearly every request) only if it learns at once of a
// change another process made: several stacks serve processes share one
// PostgreSQL database, FastCGI processes one SQLite file. The table
// cache_versions (migration 0018) holds a version per cached thing, moved on by
// a trigger in the very transaction that changes the thing. A cache keeps the
// version it read with its data and, before each use, compares it with
// CacheVersion: one single-row read by primary key, without a transaction;
// only when the version moved does it read the data again, in one snapshot
// with its version (Tx.CacheVersion).

// CachePreferences names the preferences' version.
const CachePreferences = "preferences"

// CacheStaff names the staff accounts' version (migration 0020).
const CacheStaff = "staff"

// CacheCirculation names the circulation rules' and the branch calendars'
// version (migration 0023).
const CacheCirculation = "circulation"

// requestCaches are the versions a session lookup reads with the session
// (SessionStore.FindCtx), in the same statement: a staff request that would
// read the session, then the preferences' version, then the signed-in account
// makes one round trip to the database instead of three.
var requestCaches = [...]string{CachePreferences, CacheStaff, CacheCirculation}

// versionQuery reads one version; a name without a row reads as version 0.
const versionQuery = `SELECT coalesce((SELECT version FROM cache_versions WHERE name = ?), 0)`

// CacheVersion returns the current version of the cached thing name. Within a
// request (WithRequestVersions) it is read once: a request uses the cached
// things as they were when it first asked, as one transaction would.
func (db *DB) CacheVersion(ctx context.Context, name string) (int64, error) {
	memo, _ := ctx.Value(versionsKey{}).(*requestVersions)
	if memo != nil {
		memo.mu.Lock()
		v, ok := memo.m[name]
		memo.mu.Unlock()
		if ok {
			return v, nil
		}
	}
	var v int64
	err := db.ReadOne(ctx, func(tx *Tx) error {
		var err error
		v, err = tx.CacheVersion(name)
		return err
	})
	if err == nil && memo != nil {
		memo.mu.Lock()
		memo.m[name] = v
		memo.mu.Unlock()
	}
	return v, err
}

type versionsKey struct{}

// noteRequestVersions records versions read for the request in ctx (if any),
// unless the request already read them: a request sees each version as it
// first read it.
func noteRequestVersions(ctx context.Context, names []string, versions []int64) {
	memo, _ := ctx.Value(versionsKey{}).(*requestVersions)
	if memo == nil {
		return
	}
	memo.mu.Lock()
	defer memo.mu.Unlock()
	for i, name := range names {
		if _, ok := memo.m[name]; !ok {
			memo.m[name] = versions[i]
		}
	}
}

// wantsRequestVersions reports whether ctx is a request's that has not yet read
// every one of requestCaches.
func wantsRequestVersions(ctx context.Context) bool {
	memo, _ := ctx.Value(versionsKey{}).(*requestVersions)
	if memo == nil {
		return false
	}
	memo.mu.Lock()
	defer memo.mu.Unlock()
	for _, name := range requestCaches {
		if _, ok := memo.m[name]; !ok {
			return true
		}
	}
	return false
}

type requestVersions struct {
	mu sync.Mutex
	m  map[string]int64
}

// WithRequestVersions returns a context for one request (an HTTP request, a
// SIP message) in which CacheVersion reads each version once: a page that asks
// for the preferences twice (its layout and its handler) costs one version
// read, not two.
func WithRequestVersions(ctx context.Context) context.Context {
	return context.WithValue(ctx, versionsKey{}, &requestVersions{m: map[string]int64{}})
}

// CacheVersion returns the version of the cached thing name as the transaction
// sees it: read in the same transaction as the data, it is the data's version.
func (tx *Tx) CacheVersion(name string) (int64, error) {
	var v int64
	if err := tx.QueryRow(versionQuery, name).Scan(&v); err != nil {
		return 0, fmt.Errorf("read the version of %s: %w", name, err)
	}
	return v, nil
}

// VersionedCache keeps values read from the database, by key, under one cache
// version (name): they are used while the version stays where it was when
// they were read, and read again once it moves. The staff accounts and the
// preferences are kept in one each.
//
// Get reads a missing or outdated value in a read transaction together with
// the version, the version first: in one snapshot the two belong together, so
// a change committed by another process between them cannot leave an old value
// cached under the new version (where no later version check would find it).
// Of two reads racing, the newer version's value stays.
type VersionedCache[K comparable, V any] struct {
	name string
	max  int

	mu      sync.Mutex
	version int64
	values  map[K]V // nil: nothing cached
}

// NewVersionedCache returns an empty cache of values under the version name,
// holding at most max of them (past it, it starts again).
func NewVersionedCache[K comparable, V any](name string, max int) *VersionedCache[K, V] {
	return &VersionedCache[K, V]{name: name, max: max}
}

// Get returns the value for key: from memory when it was read at the current
// version (db.CacheVersion: one version read a request), else from load, which
// reads it in the transaction it is given.
func (c *VersionedCache[K, V]) Get(ctx context.Context, d *DB, key K, load func(*Tx) (V, error)) (V, error) {
	var zero V
	v, err := d.CacheVersion(ctx, c.name)
	if err != nil {
		return zero, err
	}
	c.mu.Lock()
	if val, ok := c.values[key]; ok && c.version == v {
		c.mu.Unlock()
		return val, nil
	}
	c.mu.Unlock()
	var val V
	err = d.Read(ctx, func(tx *Tx) error {
		var err error
		if v, err = tx.CacheVersion(c.name); err != nil {
			return err
		}
		val, err = load(tx)
		return err
	})
	if err != nil {
		return zero, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.values != nil && v < c.version:
		// A read that raced a newer one: the newer values stay.
	case c.values == nil || v > c.version || len(c.values) >= c.max:
		c.version, c.values = v, map[K]V{key: val}
	default:
		c.values[key] = val
	}
	return val, nil
}

// Invalidate drops every cached value: the next Get of each reads it again.
func (c *VersionedCache[K, V]) Invalidate() {
	c.mu.Lock()
	c.values = nil
	c.mu.Unlock()
}
