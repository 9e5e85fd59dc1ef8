package web_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/dbtest"
	"github.com/stacks-ils/stacks/demo"
	"github.com/stacks-ils/stacks/demo/demotest"
	"github.com/stacks-ils/stacks/waittest"
	"github.com/stacks-ils/stacks/web"
)

// newSearchEnv is newDemoEnv with a larger catalogue and the given pool and
// search settings.
func newSearchEnv(t *testing.T, titles int, opt db.Options, cfg web.Config) *testEnv {
	t.Helper()
	c := dbtest.NewClock(dbtest.Monday)
	d := demotest.Demo(t, demo.Options{Titles: titles, Patrons: 20}, c.Now(), opt)
	d.Now = c.Now
	cfg.DB, cfg.CachePreferences = d, true
	w := web.New(cfg)
	srv := httptest.NewServer(w)
	t.Cleanup(srv.Close)
	return &testEnv{DB: d, Clock: c, Srv: srv, Web: w}
}

// TestSearchBudgetPage: a search over the budget, or past its time, is answered
// on the search page with the message beside the field (422), never a 500.
func TestSearchBudgetPage(t *testing.T) {
	e := newSearchEnv(t, 50, db.Options{}, web.Config{})
	c := e.deskClient(t)
	for _, tc := range []struct{ name, query, want string }{
		{"ErrShortPrefix", "q=" + url.QueryEscape(strings.Repeat("s* ", 166)) + "&sort=title", "A word ending in * needs at least 3 letters"},
		{"ErrTooManyWords", "q=" + url.QueryEscape("one two three four five six seven eight nine"), "Use at most 8 words"},
		{"ErrTooManyPrefixes", "q=" + url.QueryEscape("sta* riv* gar* his*"), "Use * on at most 3 words"},
		{"ErrPastListLimit", "q=river&page=100000", "Only the first 10000 results"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.get(t, c, "/search?"+tc.query)
			if r.Status != http.StatusUnprocessableEntity || !strings.Contains(r.Body, `id="q-error"`) || !strings.Contains(r.Body, tc.want) {
				t.Fatalf("%d, want 422 saying %q beside the field\n%.300s", r.Status, tc.want, r.Body)
			}
		})
	}
	t.Run("ErrSearchTooLong", func(t *testing.T) {
		e := newSearchEnv(t, 50, db.Options{}, web.Config{SearchTimeout: time.Nanosecond})
		c := e.deskClient(t)
		r := e.get(t, c, "/search?q=river")
		if r.Status != http.StatusUnprocessableEntity || !strings.Contains(r.Body, "The search took too long: narrow it") {
			t.Fatalf("%d, want 422 saying the search took too long\n%.300s", r.Status, r.Body)
		}
	})
}

// TestSearchCannotStallTheDesk: more expensive searches at once than there are
// read connections (the finding's search, and the most expensive ones within
// the budget), with a short time limit and one search slot, while a desk checks
// items out and in and a monitor polls /healthz: the desk and /healthz are
// answered every time (no 500), each search is answered with its results, a
// message beside the field (422) or "busy, try again" (503), never a 500. The
// desk's latencies are reported, not asserted (the machine is shared).
func TestSearchCannotStallTheDesk(t *testing.T) {
	e := newSearchEnv(t, 3000, db.Options{ReadConns: 2, HeavyReadWait: 20 * time.Millisecond},
		web.Config{SearchTimeout: 200 * time.Millisecond})
	attack := []string{
		"q=" + url.QueryEscape(strings.Repeat("s* ", 166)) + "&sort=title",
		"q=the&sort=title&available=1",
		"q=" + url.QueryEscape("the* and* for*") + "&sort=title",
		"q=" + url.QueryEscape("subject:fic* the* his*") + "&available=1",
		"q=the&page=400",
	}
	const searchers = 8 // more than the read pool (2)
	stop := make(chan struct{})
	var mu sync.Mutex
	statuses := map[int]int{}
	var wg sync.WaitGroup
	for i := range searchers {
		c := e.deskClient(t)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				resp, err := c.Get(e.Srv.URL + "/search?" + attack[(i+n)%len(attack)])
				if err != nil {
					t.Error(err)
					return
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				mu.Lock()
				statuses[resp.StatusCode]++
				mu.Unlock()
				switch resp.StatusCode {
				case http.StatusOK:
				case http.StatusUnprocessableEntity, http.StatusServiceUnavailable:
					if !strings.Contains(string(body), `id="q-error"`) {
						t.Errorf("search %d without a message beside the field", resp.StatusCode)
					}
				default:
					t.Errorf("search %q: %d", attack[(i+n)%len(attack)], resp.StatusCode)
				}
			}
		}()
	}

	var desk, health []time.Duration
	timed := func(into *[]time.Duration, f func() response) response {
		start := time.Now()
		r := f()
		*into = append(*into, time.Since(start))
		return r
	}
	c := e.deskClient(t)
	waittest.For(t, "the searches to start", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(statuses) > 0
	})
	for round := range 5 {
		if r := timed(&health, func() response { return e.get(t, c, "/healthz") }); r.Status != http.StatusOK {
			t.Fatalf("/healthz under the searches: %d", r.Status)
		}
		if r := timed(&desk, func() response {
			return e.scan(t, c, "/checkout/scan", url.Values{"scan": {"P0001"}})
		}); r.Status != http.StatusOK {
			t.Fatalf("round %d: patron scan: %d\n%.300s", round, r.Status, r.Body)
		}
		for _, item := range []string{"I00001", "I00002"} {
			if r := timed(&desk, func() response {
				return e.scan(t, c, "/checkout/scan", url.Values{"scan": {item}})
			}); r.Status != http.StatusOK {
				t.Fatalf("round %d: check out %s: %d\n%.300s", round, item, r.Status, r.Body)
			}
		}
		if r := timed(&desk, func() response { return e.post(t, c, "/checkout/done", nil) }); r.Status >= 500 {
			t.Fatalf("round %d: end the visit: %d", round, r.Status)
		}
		for _, item := range []string{"I00001", "I00002"} {
			if r := timed(&desk, func() response {
				return e.scan(t, c, "/checkin", url.Values{"barcode": {item}})
			}); r.Status != http.StatusOK {
				t.Fatalf("round %d: check in %s: %d\n%.300s", round, item, r.Status, r.Body)
			}
		}
	}
	close(stop)
	wg.Wait()
	report := func(name string, ds []time.Duration) {
		slices.Sort(ds)
		t.Logf("%s: %d answered, median %v, max %v", name, len(ds), ds[len(ds)/2].Round(time.Millisecond), ds[len(ds)-1].Round(time.Millisecond))
	}
	report("desk (scans)", desk)
	report("/healthz", health)
	t.Logf("searches by status: %v", statuses)
}
