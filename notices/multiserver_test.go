package notices_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/dbtest"
	"github.com/stacks-ils/stacks/db/pgtest"
	"github.com/stacks-ils/stacks/notices"
)

// TestDailyRunOnceAcrossServers: two servers' schedulers, each with its own
// db.DB on one database, tick at once when the daily run is due. The daily
// jobs run once and each notice is queued once: while one server's pass runs,
// the other's finds the notices' lock taken and skips, and its next pass finds
// the day done. On SQLite (one server per file) the lock is the process's.
func TestDailyRunOnceAcrossServers(t *testing.T) {
	for _, e := range pgtest.Engines() {
		t.Run(e.String(), func(t *testing.T) {
			ctx := context.Background()
			var l *lib
			var path string
			if e == db.Postgres {
				path = pgtest.URL(t)
				l = &lib{tb: t, d: openServer(t, path), clock: dbtest.NewClock(testNow)}
				if err := buildLib(l.d, "UTC"); err != nil {
					t.Fatal(err)
				}
				l.d.Now = l.clock.Now
			} else {
				l = newLib(t, "UTC")
				path = l.d.Path()
			}
			other := openServer(t, path)
			other.Now = l.clock.Now
			alex := l.patron("P1", "Alex", "Reader", "alex@example.org")
			l.loan(alex, "Overdue One", at(time.UTC, 2026, 11, 30, 20, 0))
			sam := l.patron("P2", "Sam", "Reader", "")
			l.loan(sam, "Overdue Two", at(time.UTC, 2026, 11, 30, 20, 0))

			// The first server's daily job holds its pass open until the
			// second server's pass has come and gone.
			var jobRuns atomic.Int32
			started, release := make(chan struct{}), make(chan struct{})
			job := notices.DailyJob{Name: "count", Run: func(ctx context.Context, d *db.DB) (string, error) {
				if jobRuns.Add(1) == 1 {
					close(started)
					<-release
				}
				return "counted", nil
			}}
			a := &notices.Scheduler{DB: l.d, At: "07:00", Jobs: []notices.DailyJob{job}}
			b := &notices.Scheduler{DB: other, At: "07:00", Jobs: []notices.DailyJob{job}}
			errA := make(chan error, 1)
			go func() { errA <- a.Tick(ctx) }()
			select {
			case <-started:
			case err := <-errA:
				t.Fatalf("the first pass ended before its job ran: %v", err)
			}
			if err := b.Tick(ctx); err != nil {
				t.Errorf("the second server's pass: %v", err)
			}
			close(release)
			if err := <-errA; err != nil {
				t.Fatalf("the first server's pass: %v", err)
			}
			// Both again, now at once: the day is done.
			errs := make(chan error, 2)
			go func() { errs <- a.Tick(ctx) }()
			go func() { errs <- b.Tick(ctx) }()
			for range 2 {
				if err := <-errs; err != nil {
					t.Error(err)
				}
			}

			if n := jobRuns.Load(); n != 1 {
				t.Errorf("the daily job ran %d times, want once", n)
			}
			if n := l.queryInt(`SELECT count(*) FROM notice_runs WHERE finished_at IS NOT NULL`); n != 1 {
				t.Errorf("%d finished runs, want 1", n)
			}
			if n := l.queryInt(`SELECT count(*) FROM notice_items`); n != 2 {
				t.Errorf("%d notice items, want 2 (one overdue per patron)", n)
			}
			for _, p := range []int64{alex, sam} {
				if n := l.queryInt(`SELECT count(*) FROM notice_messages WHERE patron_id = ?`, p); n != 1 {
					t.Errorf("patron %d: %d messages, want 1", p, n)
				}
			}
		})
	}
}

// openServer opens the database at path as another server would.
func openServer(t *testing.T, path string) *db.DB {
	t.Helper()
	d, err := db.Open(path, db.Options{Synchronous: "NORMAL"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	if _, err := d.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return d
}
