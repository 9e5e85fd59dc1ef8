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
)

func openCounter(t *testing.T, opt db.Options) *db.DB {
	t.Helper()
	d, err := db.Open(filepath.Join(t.TempDir(), "stacks.db"), opt)
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
// undoes only its own work.
func TestGroupCommit(t *testing.T) {
	d := openCounter(t, db.Options{})
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
	time.Sleep(100 * time.Millisecond)
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
		time.Sleep(time.Millisecond)
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
