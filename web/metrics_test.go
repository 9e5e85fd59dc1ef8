package web_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/dbtest"
	"github.com/stacks-ils/stacks/demo"
	"github.com/stacks-ils/stacks/demo/demotest"
	"github.com/stacks-ils/stacks/metrics"
	"github.com/stacks-ils/stacks/web"
)

func newMetricsEnv(t *testing.T, allow ...netip.Prefix) (*testEnv, *metrics.Metrics) {
	t.Helper()
	c := dbtest.NewClock(dbtest.Monday)
	d := demotest.Demo(t, demo.Options{Titles: 50, Patrons: 10}, c.Now(), db.Options{})
	d.Now = c.Now
	m := metrics.New(d)
	w := web.New(web.Config{DB: d, CachePreferences: true, Metrics: m, MetricsAllow: allow})
	srv := httptest.NewServer(w)
	t.Cleanup(srv.Close)
	return &testEnv{DB: d, Clock: c, Srv: srv, Web: w}, m
}

// gathered returns the value of one series, by its labels.
func gathered(t *testing.T, m *metrics.Metrics, name string, labels map[string]string) float64 {
	t.Helper()
series:
	for _, s := range m.Series(name) {
		for k, want := range labels {
			if s.Labels[k] != want {
				continue series
			}
		}
		return s.Value
	}
	return 0
}

func TestMetricsCount(t *testing.T) {
	e, m := newMetricsEnv(t)
	c := e.client(t)
	before := gathered(t, m, "stacks_http_request_duration_seconds", map[string]string{"route": "/login", "method": "GET", "status": "200"})
	e.get(t, c, "/login")
	e.get(t, c, "/login")
	if got := gathered(t, m, "stacks_http_request_duration_seconds", map[string]string{"route": "/login", "method": "GET", "status": "200"}); got != before+2 {
		t.Errorf("GET /login counted %v times, want 2", got-before)
	}
	e.login(t, c, "desk", "desk")
	e.post(t, c, "/checkout/patron", url.Values{"card": {"P0001"}})

	selects := gathered(t, m, "stacks_sql_statements_total", map[string]string{"kind": "select", "source": "http"})
	inserts := gathered(t, m, "stacks_sql_statements_total", map[string]string{"kind": "insert", "source": "http"})
	r := e.post(t, c, "/checkout", url.Values{"barcode": {"I00001"}})
	if r.Status != http.StatusSeeOther {
		t.Fatalf("checkout: %d", r.Status)
	}
	m2 := serverTimingRE.FindStringSubmatch(r.Header.Get("Server-Timing"))
	dSel := gathered(t, m, "stacks_sql_statements_total", map[string]string{"kind": "select", "source": "http"}) - selects
	dIns := gathered(t, m, "stacks_sql_statements_total", map[string]string{"kind": "insert", "source": "http"}) - inserts
	if m2 == nil || m2[2] != strconv.Itoa(int(dSel)) {
		t.Errorf("select counter moved by %v; the response's Server-Timing says %v", dSel, m2)
	}
	if dIns != 1 {
		t.Errorf("insert counter moved by %v for one checkout, want 1 (the loan)", dIns)
	}
	if got := gathered(t, m, "stacks_circulation_total", map[string]string{"action": "checkout", "channel": "desk"}); got != 1 {
		t.Errorf("checkouts counted %v, want 1", got)
	}
	e.post(t, c, "/checkin", url.Values{"barcode": {"I00001"}})
	if got := gathered(t, m, "stacks_circulation_total", map[string]string{"action": "checkin", "channel": "desk"}); got != 1 {
		t.Errorf("checkins counted %v, want 1", got)
	}
	if got := gathered(t, m, "stacks_http_request_duration_seconds", map[string]string{"route": "/checkout", "method": "POST", "status": "303"}); got != 1 {
		t.Errorf("POST /checkout 303 counted %v, want 1", got)
	}
	if len(m.Series("stacks_db_pool_max_open_connections")) != 2 {
		t.Error("no pool statistics for the read and write pools")
	}
	// The second desk request onwards runs its session query from the cache.
	// Engine-specific: on SQLite the cache is db's (stmtcache.go), which the
	// metric counts; on PostgreSQL pgx keeps each connection's statements
	// prepared itself, uncounted (the metric stays 0 there), so the
	// counterpart finds the session query among the statements the server
	// keeps prepared for the read pool's connections.
	if dbtest.Engine() == db.Postgres {
		if n := preparedOnReadPool(t, e.DB, "%JOIN sessions s ON s.token_hash%"); n < 1 {
			t.Errorf("the session query is prepared on %d read connections after a desk session, want at least 1", n)
		}
		return
	}
	if hits := gathered(t, m, "stacks_sql_statement_cache_hits_total", nil); hits < 1 {
		t.Errorf("statement cache hits %v after a desk session", hits)
	}
}

// preparedOnReadPool counts, on PostgreSQL, the read pool's connections that
// keep a prepared statement like pattern: it holds every read connection at
// once (db.Options' default 4), each asking the server for its own prepared
// statements (pg_prepared_statements is per connection).
func preparedOnReadPool(t *testing.T, d *db.DB, pattern string) int {
	t.Helper()
	const conns = 4
	var all sync.WaitGroup
	all.Add(conns)
	var total atomic.Int64
	errs := make(chan error, conns)
	for range conns {
		go func() {
			errs <- d.Read(context.Background(), func(tx *db.Tx) error {
				all.Done()
				all.Wait() // every connection held: each goroutine has its own
				var n int64
				if err := tx.QueryRow(`SELECT count(*) FROM pg_prepared_statements WHERE statement LIKE ?`, pattern).Scan(&n); err != nil {
					return err
				}
				total.Add(min(n, 1))
				return nil
			})
		}()
	}
	for range conns {
		select {
		case err := <-errs:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the read pool's connections were not all free")
		}
	}
	return int(total.Load())
}

func TestMetricsAccess(t *testing.T) {
	e, _ := newMetricsEnv(t)
	if r := e.get(t, e.client(t), "/metrics"); r.Status != http.StatusSeeOther {
		t.Errorf("anonymous /metrics: %d, want a redirect to login", r.Status)
	}
	desk := e.client(t)
	e.login(t, desk, "desk", "desk")
	if r := e.get(t, desk, "/metrics"); r.Status != http.StatusForbidden {
		t.Errorf("circulation staff /metrics: %d, want 403", r.Status)
	}
	admin := e.client(t)
	e.login(t, admin, "admin", "admin")
	r := e.get(t, admin, "/metrics")
	if r.Status != 200 || !strings.Contains(r.Body, "stacks_http_request_duration_seconds") || !strings.Contains(r.Body, "go_goroutines") {
		t.Errorf("admin /metrics: %d", r.Status)
	}

	allowed, _ := newMetricsEnv(t, netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128"))
	if r := allowed.get(t, allowed.client(t), "/metrics"); r.Status != 200 || !strings.Contains(r.Body, "stacks_db_pool_open_connections") {
		t.Errorf("/metrics from an allowed address: %d", r.Status)
	}
}
