package db_test

import (
	"context"
	"testing"

	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/pgtest"
)

// TestExclusiveKeepsItsConnection: on PostgreSQL, Exclusive's lock is held by
// the same server process from one run to the next (the connection is kept,
// not opened again for every scheduler tick), another server finds it taken
// while it runs, and a kept connection whose server process has gone is
// replaced: the next run still runs.
func TestExclusiveKeepsItsConnection(t *testing.T) {
	url := pgtest.URL(t)
	ctx := context.Background()
	a := openMigrated(t, url, db.Options{})
	b := openMigrated(t, url, db.Options{})

	// holder is the server process holding the advisory lock, read while fn runs.
	holder := func() int64 {
		t.Helper()
		var pid int64
		err := a.Read(ctx, func(tx *db.Tx) error {
			return tx.QueryRow(`SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`).Scan(&pid)
		})
		if err != nil {
			t.Fatal(err)
		}
		return pid
	}
	run := func() int64 {
		t.Helper()
		var pid int64
		ran, err := a.Exclusive(ctx, "test work", func(ctx context.Context) error {
			pid = holder()
			otherRan, err := b.Exclusive(ctx, "test work", func(context.Context) error { return nil })
			if err != nil {
				t.Errorf("the other server's Exclusive: %v", err)
			}
			if otherRan {
				t.Error("the other server ran the work while this one held its lock")
			}
			return nil
		})
		if err != nil || !ran {
			t.Fatalf("Exclusive: ran %v, err %v; want it run", ran, err)
		}
		return pid
	}

	first := run()
	for i := range 3 {
		if pid := run(); pid != first {
			t.Fatalf("run %d: the lock was held by server process %d, the first run's by %d: the connection was not kept", i+2, pid, first)
		}
	}

	// The kept connection's server process ends (a restart, an idle timeout):
	// the next run connects again.
	err := a.Write(ctx, func(tx *db.Tx) error {
		var ok bool
		return tx.QueryRow(`SELECT pg_terminate_backend(?, 10000)`, first).Scan(&ok)
	})
	if err != nil {
		t.Fatal(err)
	}
	if pid := run(); pid == first {
		t.Fatalf("after its server process ended, the lock is still held by process %d", pid)
	}
}
