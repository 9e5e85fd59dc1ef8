package hardening

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stacks-ils/stacks/waittest"
)

// TestBackupUnderLoad runs stacks backup, a separate process, against the live
// database while desks check items out and in through the server: every backup
// finishes, the desks are not held up, and each copy passes stacks check (SQLite's
// integrity and foreign key checks and the circulation invariants) and holds at
// least every loan committed before it began.
func TestBackupUnderLoad(t *testing.T) {
	path := newDB(t)
	loads := chooseLoads(t, path, scale(3, 8), 6)
	readBaseline(t, path, loads)
	s := startServer(t, path)

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	acked := 0
	for _, l := range loads {
		wg.Add(1)
		go func(l *deskLoad) {
			defer wg.Done()
			n, err := l.run(s.Base, stop)
			mu.Lock()
			acked += n
			mu.Unlock()
			if err != "" {
				t.Error(err)
			}
		}(l)
	}

	dir := t.TempDir()
	backups := scale(3, 20)
	d := openDB(t, path)
	last := queryInt(t, d, `SELECT count(*) FROM loans`)
	for i := 0; i < backups; i++ {
		// Each backup begins after the desks have checked more out (a loan's
		// row stays after its return).
		var before int
		waittest.For(t, "a checkout since the last backup", func() bool {
			before = queryInt(t, d, `SELECT count(*) FROM loans`)
			return before > last
		})
		last = before
		out := filepath.Join(dir, fmt.Sprintf("backup-%02d.db", i))
		start := time.Now()
		if msg, err := runStacks(t, "backup", "--db", path, out); err != nil {
			t.Fatalf("stacks backup during the load: %v\n%s", err, msg)
		}
		took := time.Since(start)
		if msg, err := runStacks(t, "check", "--db", out); err != nil {
			t.Fatalf("stacks check on backup %d: %v\n%s", i, err, msg)
		}
		c := openDB(t, out)
		if n := queryInt(t, c, `SELECT count(*) FROM loans`); n < before {
			t.Errorf("backup %d has %d loans, but %d were committed before it began", i, n, before)
		}
		c.Close()
		t.Logf("backup %d in %v", i, took.Round(time.Millisecond))
	}
	d.Close()
	close(stop)
	wg.Wait()
	if acked < 20 {
		t.Errorf("only %d checkouts and checkins went through while the backups ran", acked)
	}
	if err := s.terminate(t); err != nil {
		t.Fatalf("stacks serve, SIGTERM: %v", err)
	}
	if out, err := runStacks(t, "backup", "--db", path, filepath.Join(dir, "backup-00.db")); err == nil || !strings.Contains(out, "already exists") {
		t.Errorf("stacks backup onto an existing file: %v\n%s", err, out)
	}
	t.Logf("%d checkouts and checkins during %d backups", acked, backups)
}
