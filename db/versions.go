package db

import (
	"context"
	"fmt"
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

// versionQuery reads one version; a name without a row reads as version 0.
const versionQuery = `SELECT coalesce((SELECT version FROM cache_versions WHERE name = ?), 0)`

// CacheVersion returns the current version of the cached thing name.
func (db *DB) CacheVersion(ctx context.Context, name string) (int64, error) {
	var v int64
	err := db.ReadOne(ctx, func(tx *Tx) error {
		var err error
		v, err = tx.CacheVersion(name)
		return err
	})
	return v, err
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
