package db

import "sync"

// memos are values a package keeps in memory for one database, by key
// (Tx.Memo): a process may serve several databases (the tests do), and a value
// read from one must not be used for another.
type memos struct{ m sync.Map }

// Memo returns the value this database keeps under key, made by mk the first
// time; nil in a write transaction. What a package keeps there is its own to
// keep coherent: under a cache version (CacheVersion) read in the same
// transaction before the data it keeps. Only read transactions see it, so that
// no transaction's uncommitted changes, which it may yet roll back, are kept
// under the version they moved on.
func (tx *Tx) Memo(key any, mk func() any) any {
	if tx.memos == nil {
		return nil
	}
	if v, ok := tx.memos.m.Load(key); ok {
		return v
	}
	v, _ := tx.memos.m.LoadOrStore(key, mk())
	return v
}

// Memo is Tx.Memo outside a transaction (tests, to forget what was kept).
func (db *DB) Memo(key any, mk func() any) any {
	v, _ := db.memos.m.LoadOrStore(key, mk())
	return v
}
