package db_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/stacks-ils/stacks/db"
)

// TestReadHeavy: heavy reads (catalogue searches) hold at most HeavyReadConns read
// connections; one more waits HeavyReadWait and gets ErrBusy, while an ordinary
// read (the desk, /healthz) still gets a connection.
func TestReadHeavy(t *testing.T) {
	d, err := db.Open(filepath.Join(t.TempDir(), "stacks.db"), db.Options{ReadConns: 2, HeavyReadWait: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	ctx := context.Background()

	// The default leaves one of the two read connections to ordinary reads: hold
	// the one heavy slot.
	holding, release := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- d.ReadHeavy(ctx, func(tx *db.Tx) error {
			var one int
			if err := tx.QueryRow(`SELECT 1`).Scan(&one); err != nil {
				return err
			}
			close(holding)
			<-release
			return nil
		})
	}()
	<-holding

	t.Run("ErrBusy", func(t *testing.T) {
		start := time.Now()
		err := d.ReadHeavy(ctx, func(tx *db.Tx) error { return errors.New("ran without a slot") })
		if !errors.Is(err, db.ErrBusy) {
			t.Fatalf("second heavy read: %v, want ErrBusy", err)
		}
		t.Logf("refused after %v", time.Since(start).Round(time.Millisecond))
	})
	t.Run("OrdinaryReadServed", func(t *testing.T) {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		err := d.Read(rctx, func(tx *db.Tx) error {
			var one int
			return tx.QueryRow(`SELECT 1`).Scan(&one)
		})
		if err != nil {
			t.Fatalf("an ordinary read while the heavy slot is taken: %v", err)
		}
	})
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	t.Run("SlotFreed", func(t *testing.T) {
		if err := d.ReadHeavy(ctx, func(tx *db.Tx) error { return nil }); err != nil {
			t.Fatalf("heavy read after the slot was freed: %v", err)
		}
	})
}

// TestReadStopsAtDeadline: a statement still running when its context's deadline
// passes is interrupted inside the engine (SQLite: modernc.org/sqlite's progress
// handler and sqlite3_interrupt; PostgreSQL: pgx's cancel request), not left to
// run on a connection of the pool. The statement would never end by itself.
func TestReadStopsAtDeadline(t *testing.T) {
	forEngines(t, func(t *testing.T, d *db.DB, _ string) {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		start := time.Now()
		err := d.ReadHeavy(ctx, func(tx *db.Tx) error {
			var n int64
			return tx.QueryRow(`WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c`).Scan(&n)
		})
		took := time.Since(start)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("an endless statement at its deadline: %v, want context.DeadlineExceeded", err)
		}
		t.Logf("stopped after %v (deadline 100ms): %v", took.Round(time.Millisecond), err)
		if took > 10*time.Second {
			t.Fatalf("stopped only after %v", took)
		}
		// The connection is usable again.
		if err := d.Read(context.Background(), func(tx *db.Tx) error {
			var one int
			return tx.QueryRow(`SELECT 1`).Scan(&one)
		}); err != nil {
			t.Fatalf("a read after the interrupted one: %v", err)
		}
	})
}
