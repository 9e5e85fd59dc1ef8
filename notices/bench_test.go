package notices_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/circulation"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/dbtest"
	"github.com/stacks-ils/stacks/notices"
)

// Sizes of the benchmark library: make bench-notices.
const (
	benchLoans   = 100_000
	benchOverdue = 10_000
	benchPatrons = 20_000
	benchDesk    = 40 // copies the desk lends and takes back during the run
)

// newBenchLib builds, with FULL durability as a library runs, a library of
// benchPatrons patrons (half with email) and benchLoans current loans, of which
// benchOverdue are overdue by 1 to 40 days and the rest fall due over the next
// five weeks; plus benchDesk copies on the shelf and a patron for the desk.
func newBenchLib(b *testing.B) (*lib, int64) {
	b.Helper()
	d, err := db.Open(filepath.Join(b.TempDir(), "stacks.db"), db.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { d.Close() })
	if _, err := d.Migrate(context.Background()); err != nil {
		b.Fatal(err)
	}
	c := dbtest.NewClock(testNow)
	d.Now = c.Now
	l := &lib{tb: b, d: d, clock: c}
	l.exec(`INSERT INTO branches (id, code, name, closed_weekdays, closes_at) VALUES (1, 'CEN', 'Central', '0', '20:00')`)
	l.exec(`INSERT INTO patron_categories (id, code, name) VALUES (1, 'ADULT', 'Adult')`)
	l.exec(`INSERT INTO item_types (id, code, name) VALUES (1, 'BOOK', 'Book')`)
	l.exec(`INSERT INTO circ_rules (loan_period, max_loans, renewals, hold_pickup_days) VALUES (21, 1000, 2, 7)`)
	l.exec(`INSERT INTO staff_users (id, username, display_name, password_hash, role, branch_id, created_at)
		VALUES (1, 'desk', 'Desk', 'x', 'circulation', 1, '2026-01-01T00:00:00Z')`)
	const created = "2026-01-01T00:00:00Z"
	err = d.Write(context.Background(), func(tx *db.Tx) error {
		pst, err := tx.Prepare(`INSERT INTO patrons (id, card, surname, first_name, email, category_id, home_branch_id, expires_on, created_at)
			VALUES (?, ?, ?, 'Reader', ?, 1, 1, '2030-01-01', ?)`)
		if err != nil {
			return err
		}
		for i := 1; i <= benchPatrons+1; i++ {
			email := ""
			if i%2 == 0 {
				email = fmt.Sprintf("p%d@example.org", i)
			}
			if _, err := pst.Exec(i, fmt.Sprintf("P%06d", i), fmt.Sprintf("Patron %d", i), email, created); err != nil {
				return err
			}
		}
		rst, err := tx.Prepare(`INSERT INTO records (id, title, author, created_at, updated_at) VALUES (?, ?, 'Author', ?, ?)`)
		if err != nil {
			return err
		}
		ist, err := tx.Prepare(`INSERT INTO items (id, barcode, record_id, home_branch_id, current_branch_id, item_type_id, status, created_at, updated_at)
			VALUES (?, ?, ?, 1, 1, 1, ?, ?, ?)`)
		if err != nil {
			return err
		}
		lst, err := tx.Prepare(`INSERT INTO loans (item_id, patron_id, branch_id, issued_at, due_at) VALUES (?, ?, 1, ?, ?)`)
		if err != nil {
			return err
		}
		for i := 1; i <= benchLoans+benchDesk; i++ {
			status := "on_loan"
			if i > benchLoans {
				status = "available"
			}
			if _, err := rst.Exec(i, fmt.Sprintf("Title %d", i), created, created); err != nil {
				return err
			}
			if _, err := ist.Exec(i, fmt.Sprintf("B%07d", i), i, status, created, created); err != nil {
				return err
			}
			if i > benchLoans {
				continue
			}
			var due time.Time
			if i <= benchOverdue {
				due = time.Date(2026, 11, 30-(i%40), 20, 0, 0, 0, time.UTC) // 1 to 40 days ago
			} else {
				due = time.Date(2026, 12, 1+(i%35), 20, 0, 0, 0, time.UTC) // today to five weeks on
			}
			if _, err := lst.Exec(i, 1+i%benchPatrons, db.FormatTime(due.AddDate(0, 0, -21)), db.FormatTime(due)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return l, benchPatrons + 1
}

// deskTimer lends and takes back the desk's copies in a loop, timing each
// checkout, until stopped.
type deskTimer struct {
	svc    *circulation.Service
	patron int64
	next   int
}

func (t *deskTimer) once(ctx context.Context) (time.Duration, error) {
	bc := fmt.Sprintf("B%07d", benchLoans+1+t.next%benchDesk)
	t.next++
	desk := stacks.Actor{StaffID: 1, Name: "desk", BranchID: 1}
	start := time.Now()
	if _, err := t.svc.Checkout(ctx, circulation.CheckoutRequest{Actor: desk, PatronID: t.patron, Barcode: bc}); err != nil {
		return 0, err
	}
	took := time.Since(start)
	_, err := t.svc.Checkin(ctx, circulation.CheckinRequest{Actor: desk, Barcode: bc})
	return took, err
}

func percentiles(ds []time.Duration) string {
	if len(ds) == 0 {
		return "no checkouts"
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	p := func(q float64) time.Duration {
		return s[min(len(s)-1, int(q*float64(len(s))))].Round(10 * time.Microsecond)
	}
	return fmt.Sprintf("n=%d p50=%v p95=%v p99=%v max=%v", len(s), p(0.50), p(0.95), p(0.99), s[len(s)-1].Round(10*time.Microsecond))
}

// benchOptions reads the run's options and the number of desk checkouts timed
// alone from the environment, so that each row of docs/performance.md can be
// reproduced:
//
//	STACKS_NOTICES_BENCH_PACE   RunOptions.Pace; 0 means not paced (default 1)
//	STACKS_NOTICES_BENCH_CHUNK  RunOptions.ChunkSize (default 100)
//	STACKS_NOTICES_BENCH_ALONE  desk checkouts timed before the run (default 1000)
func benchOptions(b *testing.B) (notices.RunOptions, int) {
	b.Helper()
	var opt notices.RunOptions
	alone := 1000
	if v := os.Getenv("STACKS_NOTICES_BENCH_PACE"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 0 {
			b.Fatalf("STACKS_NOTICES_BENCH_PACE=%q: want a number, 0 for not paced", v)
		}
		opt.Pace = f
		if f == 0 {
			opt.Pace = -1
		}
	}
	for _, e := range []struct {
		name string
		to   *int
	}{{"STACKS_NOTICES_BENCH_CHUNK", &opt.ChunkSize}, {"STACKS_NOTICES_BENCH_ALONE", &alone}} {
		if v := os.Getenv(e.name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 {
				b.Fatalf("%s=%q: want a positive number", e.name, v)
			}
			*e.to = n
		}
	}
	return opt, alone
}

// BenchmarkDailyRun times the daily notices run over 100,000 loans, 10,000 of
// them overdue, counting its SQL statements, and times desk checkouts alone and
// while the run goes (make bench-notices; benchOptions for the variants).
func BenchmarkDailyRun(b *testing.B) {
	opt, alone := benchOptions(b)
	pace := "paced (pace 1)"
	if opt.Pace < 0 {
		pace = "not paced"
	} else if opt.Pace > 0 {
		pace = fmt.Sprintf("paced (pace %g)", opt.Pace)
	}
	b.Logf("options: chunks of %d items, %s, %d desk checkouts alone", cmpInt(opt.ChunkSize, 100), pace, alone)
	for range b.N {
		b.StopTimer()
		start := time.Now()
		l, deskPatron := newBenchLib(b)
		b.Logf("library: %d loans (%d overdue), %d patrons, built in %v", benchLoans, benchOverdue, benchPatrons, time.Since(start).Round(time.Millisecond))
		ctx := context.Background()
		t := &deskTimer{svc: circulation.NewService(l.d, nil), patron: deskPatron}

		// The desk alone.
		var idle []time.Duration
		for range alone {
			d, err := t.once(ctx)
			if err != nil {
				b.Fatal(err)
			}
			idle = append(idle, d)
		}

		// The desk while the run goes.
		var during []time.Duration
		var deskErr error
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				d, err := t.once(ctx)
				if err != nil {
					deskErr = err
					return
				}
				during = append(during, d)
			}
		}()
		rctx, stats := db.WithStats(ctx)
		b.StartTimer()
		start = time.Now()
		res, err := notices.RunDaily(rctx, l.d, opt)
		took := time.Since(start)
		b.StopTimer()
		close(stop)
		wg.Wait()
		if err != nil {
			b.Fatal(err)
		}
		if deskErr != nil {
			b.Fatal(deskErr)
		}
		sel, ins, upd, _ := stats.Kinds()
		b.Logf("run: %v, %d notice items, %d messages; %d statements (%d select, %d insert, %d update): %.2f per item, %.2f per message",
			took.Round(time.Millisecond), res.Items, res.Messages, stats.Statements(), sel, ins, upd,
			float64(stats.Statements())/float64(max(res.Items, 1)), float64(stats.Statements())/float64(max(res.Messages, 1)))
		b.Logf("desk checkout alone:        %s", percentiles(idle))
		b.Logf("desk checkout during run:   %s", percentiles(during))
		b.ReportMetric(float64(took.Milliseconds()), "run-ms")
		b.ReportMetric(float64(res.Items), "items")
		b.ReportMetric(float64(res.Messages), "messages")
		b.ReportMetric(float64(stats.Statements())/float64(max(res.Items, 1)), "stmts/item")
	}
}

func cmpInt(n, def int) int {
	if n <= 0 {
		return def
	}
	return n
}
