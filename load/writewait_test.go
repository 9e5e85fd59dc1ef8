package load_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/pgtest"
	"github.com/stacks-ils/stacks/load"
	"github.com/stacks-ils/stacks/metrics"
)

// TestWatchWritesRestart: a server whose counts went down between the two
// readings restarted; the watch says so rather than report a difference.
func TestWatchWritesRestart(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := 10
		if calls.Add(1) > 1 {
			n = 3
		}
		for _, stage := range db.WriteStageNames {
			fmt.Fprintf(w, "stacks_db_write_stage_seconds_bucket{stage=%q,le=\"+Inf\"} %d\n", stage, n)
			fmt.Fprintf(w, "stacks_db_write_stage_seconds_sum{stage=%q} 0.5\n", stage)
		}
	}))
	defer srv.Close()
	w := load.WatchWrites([]string{srv.URL})
	w.Start()
	if waits, err := w.Stop(); err == nil || !strings.Contains(err.Error(), "restarted") {
		t.Errorf("counts that went down: %v, %v; want an error saying the server restarted", waits, err)
	}
}

// TestWatchWrites: the watch reads the write stages from two servers'
// /metrics and reports the writes made between its readings, summed, with
// the time a slow write took in its run stage; a /metrics it may not read is
// an error that says how to allow it. Both engines.
func TestWatchWrites(t *testing.T) {
	for _, e := range pgtest.Engines() {
		t.Run(e.String(), func(t *testing.T) {
			url := filepath.Join(t.TempDir(), "stacks.db")
			if e == db.Postgres {
				url = pgtest.URL(t)
			}
			var servers []string
			var dbs []*db.DB
			for range 2 {
				d, err := db.Open(url, db.Options{})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { d.Close() })
				if _, err := d.Migrate(context.Background()); err != nil {
					t.Fatal(err)
				}
				srv := httptest.NewServer(metrics.New(d).Handler())
				t.Cleanup(srv.Close)
				servers, dbs = append(servers, srv.URL), append(dbs, d)
			}
			ctx := context.Background()
			write := func(d *db.DB, sleep time.Duration) {
				t.Helper()
				if err := d.Write(ctx, func(tx *db.Tx) error {
					time.Sleep(sleep) // a slow write: the time the watch must report
					_, err := tx.Exec(`UPDATE cache_versions SET version = version WHERE name = 'preferences'`)
					return err
				}); err != nil {
					t.Fatal(err)
				}
			}
			write(dbs[0], 0) // before the window: not counted
			w := load.WatchWrites(servers)
			w.Start()
			for range 3 {
				write(dbs[0], 0)
			}
			write(dbs[1], 60*time.Millisecond)
			waits, err := w.Stop()
			if err != nil {
				t.Fatal(err)
			}
			if len(waits) != len(db.WriteStageNames) {
				t.Fatalf("%d stages: %v", len(waits), waits)
			}
			for i, ww := range waits {
				if ww.Stage != db.WriteStageNames[i] || ww.Writes != 4 {
					t.Errorf("stage %d: %+v, want %s with 4 writes", i, ww, db.WriteStageNames[i])
				}
			}
			// The slow write is one of four: the run stage's mean is at least
			// a quarter of its sleep.
			if run := waits[2]; run.MeanMS < 15 || run.P95MS < 60 {
				t.Errorf("run stage %+v: the 60 ms write is missing", run)
			}
			if line := waits.String(); !strings.HasPrefix(line, "4 writes; ms queue mean ") {
				t.Errorf("report line %q", line)
			}

			// A server whose /metrics refuses the watch.
			refuse := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, "/login", http.StatusSeeOther)
			}))
			t.Cleanup(refuse.Close)
			w = load.WatchWrites([]string{servers[0], refuse.URL})
			w.Start()
			if _, err := w.Stop(); err == nil || !strings.Contains(err.Error(), "--metrics-allow 127.0.0.1") {
				t.Errorf("a refused /metrics: %v, want an error naming --metrics-allow", err)
			}
		})
	}
}
