package db_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/pgtest"
	"github.com/stacks-ils/stacks/waittest"
)

func openCounter(t *testing.T, opt db.Options) *db.DB {
	t.Helper()
	return openCounterAt(t, filepath.Join(t.TempDir(), "stacks.db"), opt)
}

// openCounterAt is openCounter on the database at url (a SQLite file or a
// PostgreSQL database).
func openCounterAt(t *testing.T, url string, opt db.Options) *db.DB {
	t.Helper()
	d, err := db.Open(url, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	if err := d.Write(context.Background(), func(tx *db.Tx) error {
		_, err := tx.Exec(`CREATE TABLE rows (who TEXT NOT NULL, n INTEGER NOT NULL)`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return d
}

func count(t *testing.T, d *db.DB, who string) int {
	var n int
	if err := d.Read(context.Background(), func(tx *db.Tx) error {
		return tx.QueryRow(`SELECT count(*) FROM rows WHERE who LIKE ?`, who).Scan(&n)
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestGroupCommit: many concurrent writers all get their work committed, fewer
// commits than transactions happen, and a failing or panicking writer in a batch
// undoes only its own work. On both engines.
func TestGroupCommit(t *testing.T) {
	for _, e := range pgtest.Engines() {
		t.Run(e.String(), func(t *testing.T) { testGroupCommit(t, openCounterAt(t, target(t, e), db.Options{})) })
	}
}

func testGroupCommit(t *testing.T, d *db.DB) {
	ctx := context.Background()
	const workers, each = 16, 25
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	panics := make(chan any, workers*each)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				kind := "ok"
				switch (w*each + i) % 10 {
				case 3:
					kind = "fail"
				case 7:
					kind = "panic"
				}
				func() {
					defer func() {
						if p := recover(); p != nil {
							panics <- p
						}
					}()
					err := d.Write(ctx, func(tx *db.Tx) error {
						if _, err := tx.Exec(`INSERT INTO rows (who, n) VALUES (?, ?)`, fmt.Sprintf("%s-%d", kind, w), i); err != nil {
							return err
						}
						switch kind {
						case "fail":
							return errors.New("refused on purpose")
						case "panic":
							panic("on purpose")
						}
						return nil
					})
					if kind == "ok" && err != nil {
						errs <- err
					}
					if kind == "fail" && (err == nil || err.Error() != "refused on purpose") {
						errs <- fmt.Errorf("failing write returned %v", err)
					}
				}()
			}
		}()
	}
	wg.Wait()
	close(errs)
	close(panics)
	for err := range errs {
		t.Error(err)
	}
	total := workers * each
	if got, want := count(t, d, "ok-%"), total-2*(total/10); got != want {
		t.Errorf("%d committed rows, want %d", got, want)
	}
	if n := count(t, d, "fail-%") + count(t, d, "panic-%"); n != 0 {
		t.Errorf("%d rows of failed writes were committed", n)
	}
	if n := len(panics); n != total/10 {
		t.Errorf("%d panics reached their callers, want %d", n, total/10)
	}
	writes, commits := d.CommitStats()
	t.Logf("%d write transactions in %d commits", writes, commits)
	if writes < int64(total) || commits >= writes {
		t.Errorf("%d writes in %d commits: no batching happened", writes, commits)
	}
}

// TestGroupCommitCancelled: a writer whose context ends while it waits never runs.
func TestGroupCommitCancelled(t *testing.T) {
	d := openCounter(t, db.Options{})
	hold := make(chan struct{})
	started := make(chan struct{})
	go d.Write(context.Background(), func(tx *db.Tx) error {
		close(started)
		<-hold // keep the writer busy
		return nil
	})
	<-started
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	ran := false
	errc := make(chan error, 1)
	go func() {
		errc <- d.Write(ctx, func(tx *db.Tx) error { ran = true; return nil })
	}()
	<-ctx.Done() // the waiting write's context ends while the writer is busy
	close(hold)
	if err := <-errc; !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("cancelled write returned %v", err)
	}
	if ran {
		t.Fatal("a cancelled write ran")
	}
}

// TestWriteRacingClose: writes that race the database's Close either commit or
// are refused with "the database is closed"; none panics, none hangs, and under
// the race detector the queue's closing does not race their sends (it did: a
// server's background job writing while the server shut down, seen in
// TestFCGI under -race).
func TestWriteRacingClose(t *testing.T) {
	for round := range 20 {
		d, err := db.Open(filepath.Join(t.TempDir(), fmt.Sprintf("close%d.db", round)), db.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make(chan error, 8*50)
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 50 {
					errs <- d.Write(context.Background(), func(tx *db.Tx) error {
						_, err := tx.Exec(`SELECT 1`)
						return err
					})
				}
			}()
		}
		first := <-errs // the writes are under way: Close races the rest
		if first != nil {
			t.Fatalf("round %d: the first write: %v", round, first)
		}
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil && err.Error() != "the database is closed" {
				t.Errorf("round %d: a write racing Close: %v, want success or \"the database is closed\"", round, err)
			}
		}
		if err := d.Write(context.Background(), func(*db.Tx) error { return nil }); err == nil || err.Error() != "the database is closed" {
			t.Errorf("round %d: a write after Close: %v, want \"the database is closed\"", round, err)
		}
	}
}

// TestCommitEach: the option turns group commit off and writes still work.
func TestCommitEach(t *testing.T) {
	d := openCounter(t, db.Options{CommitEach: true})
	for i := 0; i < 5; i++ {
		if err := d.Write(context.Background(), func(tx *db.Tx) error {
			_, err := tx.Exec(`INSERT INTO rows (who, n) VALUES ('each', ?)`, i)
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	if n := count(t, d, "each"); n != 5 {
		t.Fatalf("%d rows, want 5", n)
	}
}

// BenchmarkDurableWrites compares one commit per write with group commit, with
// 32 concurrent writers, at synchronous=FULL.
func BenchmarkDurableWrites(b *testing.B) {
	for _, each := range []bool{true, false} {
		name := "group"
		if each {
			name = "commit-each"
		}
		b.Run(name, func(b *testing.B) {
			d, err := db.Open(filepath.Join(b.TempDir(), "stacks.db"), db.Options{CommitEach: each})
			if err != nil {
				b.Fatal(err)
			}
			defer d.Close()
			d.Write(context.Background(), func(tx *db.Tx) error {
				_, err := tx.Exec(`CREATE TABLE rows (who TEXT NOT NULL, n INTEGER NOT NULL)`)
				return err
			})
			b.SetParallelism(16)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := d.Write(context.Background(), func(tx *db.Tx) error {
						_, err := tx.Exec(`INSERT INTO rows (who, n) VALUES ('b', 1)`)
						return err
					}); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "writes/s")
		})
	}
}

// TestGroupCommitFirstWriteFails: a batch's first write runs without a
// savepoint (db.groupWriter.run); when it fails, its work is undone by
// starting the transaction again, and the writes after it in the batch,
// failing or not, keep or lose only their own work. Both engines.
func TestGroupCommitFirstWriteFails(t *testing.T) {
	for _, e := range pgtest.Engines() {
		t.Run(e.String(), func(t *testing.T) {
			d := openCounterAt(t, target(t, e), db.Options{})
			ctx := context.Background()
			insert := func(who string, fail bool) func(*db.Tx) error {
				return func(tx *db.Tx) error {
					if _, err := tx.Exec(`INSERT INTO rows (who, n) VALUES (?, 1)`, who); err != nil {
						return err
					}
					if fail {
						// A failed statement, as a refused write may leave
						// (on PostgreSQL it aborts the transaction).
						tx.Exec(`INSERT INTO no_such_table VALUES (1)`)
						return errors.New("refused on purpose")
					}
					return nil
				}
			}
			// Hold the writer with one write while the batch queues behind it,
			// in this order: two failing writes first, then the rest.
			hold, held := make(chan struct{}), make(chan struct{})
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := d.Write(ctx, func(tx *db.Tx) error {
					close(held)
					<-hold
					return insert("holder", false)(tx)
				}); err != nil {
					t.Error(err)
				}
			}()
			<-held
			jobs := []struct {
				who  string
				fail bool
			}{{"fail-1", true}, {"fail-2", true}, {"ok-1", false}, {"fail-3", true}, {"ok-2", false}}
			for i, j := range jobs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					err := d.Write(ctx, insert(j.who, j.fail))
					if j.fail != (err != nil) {
						t.Errorf("%s: Write returned %v", j.who, err)
					}
				}()
				// Queued in this order: each behind the one before.
				waittest.For(t, j.who+" in the queue", func() bool { return db.QueuedWrites(d) == i+1 })
			}
			_, before := d.CommitStats()
			close(hold)
			wg.Wait()
			for _, j := range jobs {
				want := 1
				if j.fail {
					want = 0
				}
				if got := count(t, d, j.who); got != want {
					t.Errorf("%s: %d rows, want %d", j.who, got, want)
				}
			}
			if _, after := d.CommitStats(); after-before != 2 {
				t.Errorf("the holder and the five writes took %d commits, want two: the five were queued together, one batch", after-before)
			}
			// A batch whose every write fails commits nothing and answers each.
			if err := d.Write(ctx, insert("fail-4", true)); err == nil || count(t, d, "fail-4") != 0 {
				t.Errorf("a lone failing write: %v, %d rows", err, count(t, d, "fail-4"))
			}
			if err := d.Write(ctx, insert("ok-3", false)); err != nil || count(t, d, "ok-3") != 1 {
				t.Errorf("a write after it: %v, %d rows", err, count(t, d, "ok-3"))
			}
		})
	}
}
