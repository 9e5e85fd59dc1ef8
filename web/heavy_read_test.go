package web_test

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/dbtest"
	"github.com/stacks-ils/stacks/web"
)

// heavyEndpoints are the pages whose reads staff size themselves (labels,
// reports and their CSV exports, a stocktake's range, histories), as a
// signed-in desk asks for them; {stocktake}, {item} and {patron} are filled in.
var heavyEndpoints = []struct{ name, path string }{
	// The finding: every item read and sorted, on the desk's read pool.
	{"LabelsPDF", "/reports/labels/pdf?kind=spine&sheet=a4-3x7&source=since&since=1970-01-01"},
	{"LabelsPreview", "/reports/labels/preview?kind=code128&sheet=a4-3x7&source=since&since=1970-01-01&branch=1"},
	{"Report", "/reports/not-borrowed?since=2026-11-30"},
	{"ReportCSV", "/reports/not-borrowed/csv?since=2026-11-30"},
	{"StocktakeResults", "/reports/stocktake/{stocktake}/results"},
	{"StocktakeScanPage", "/reports/stocktake/{stocktake}"},
	{"ItemHistory", "/items/{item}/history"},
	{"PatronHistory", "/patrons/{patron}/history"},
}

// TestHeavyReadsCannotStallTheDesk floods each heavy page in turn from more
// clients than there are read connections while a desk checks items out and
// in, and compares the desk's median answer time with its median measured just
// before, in the same test, with nothing else running: the flood may slow the
// desk (the machine's two cores are shared) but not queue it behind the heavy
// reads, which run in the heavy-read slots as catalogue searches do. Every
// heavy answer is a page (200), a message (422) or "busy, try again" (503),
// never a 500.
func TestHeavyReadsCannotStallTheDesk(t *testing.T) {
	// 3,000 titles (about 9,000 copies): reading and sorting them all takes tens
	// of milliseconds, enough to queue the desk behind eight of them on two
	// read connections.
	e := newSearchEnv(t, 3000, db.Options{ReadConns: 2}, web.Config{})
	admin := e.adminClient(t)
	var central, item, patron int64
	err := e.DB.Read(context.Background(), func(tx *db.Tx) error {
		if err := tx.QueryRow(`SELECT id FROM branches WHERE code = 'CEN'`).Scan(&central); err != nil {
			return err
		}
		if err := tx.QueryRow(`SELECT id FROM items WHERE barcode = 'I00003'`).Scan(&item); err != nil {
			return err
		}
		return tx.QueryRow(`SELECT id FROM patrons WHERE card = 'P0002'`).Scan(&patron)
	})
	if err != nil {
		t.Fatal(err)
	}
	// A stocktake of every call number at Central: its results read the branch's
	// whole stock.
	r := e.post(t, admin, "/reports/stocktake", url.Values{"branch": {strconv.FormatInt(central, 10)}, "from": {"0"}, "to": {"ZZZZ"}})
	if r.Status != http.StatusSeeOther {
		t.Fatalf("start a stocktake: %d\n%.300s", r.Status, r.Body)
	}
	stocktake := strings.TrimPrefix(r.Location, "/reports/stocktake/")
	fill := strings.NewReplacer("{stocktake}", stocktake, "{item}", strconv.FormatInt(item, 10), "{patron}", strconv.FormatInt(patron, 10))

	desk := e.deskClient(t)
	for _, ep := range heavyEndpoints {
		t.Run(ep.name, func(t *testing.T) {
			path := fill.Replace(ep.path)
			if r := e.get(t, admin, path); r.Status != http.StatusOK && r.Status != http.StatusUnprocessableEntity {
				t.Fatalf("%s alone: %d\n%.300s", path, r.Status, r.Body)
			}
			// The baseline: the desk while as many clients ask as fast for the
			// Labels form (what every heavy page reads besides its heavy read),
			// which measures what the clients' requests themselves cost the
			// machine.
			_, control := flood(t, e, "/reports/labels", 8, func() []time.Duration { return deskRounds(t, e, desk, 4) })
			statuses, flooded := flood(t, e, path, 8, func() []time.Duration { return deskRounds(t, e, desk, 4) })
			c, f := median(control), median(flooded)
			t.Logf("desk median %v under the Labels form, %v under %s (%d answers: %v)", c, f, path, len(flooded), statuses)
			if bound := 4 * c; f > bound {
				t.Errorf("the desk's median answer went from %v to %v under %s (bound %v): the heavy reads queued it", c, f, path, bound)
			}
			for st := range statuses {
				if st != http.StatusOK && st != http.StatusUnprocessableEntity && st != http.StatusServiceUnavailable {
					t.Errorf("%s under the flood answered %d (%d times)", path, st, statuses[st])
				}
			}
		})
	}
}

// flood has clients signed in as desk staff ask for path back to back until
// work, run once all of them have sent their first request, returns; it
// returns the answers' statuses and what work returned.
func flood(t *testing.T, e *testEnv, path string, clients int, work func() []time.Duration) (map[int]int, []time.Duration) {
	t.Helper()
	stop := make(chan struct{})
	var started sync.WaitGroup
	started.Add(clients)
	var mu sync.Mutex
	statuses := map[int]int{}
	var wg sync.WaitGroup
	for range clients {
		c := e.deskClient(t)
		wg.Add(1)
		go func() {
			defer wg.Done()
			first := true
			for {
				select {
				case <-stop:
					if first {
						started.Done()
					}
					return
				default:
				}
				req, _ := http.NewRequest(http.MethodGet, e.Srv.URL+path, nil)
				if first {
					first = false
					started.Done()
				}
				resp, err := c.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				mu.Lock()
				statuses[resp.StatusCode]++
				mu.Unlock()
			}
		}()
	}
	started.Wait() // every client has a request on its way
	out := work()
	close(stop)
	wg.Wait()
	return statuses, out
}

// deskRounds serves patron P0001 rounds times at the desk (the patron's card,
// two items out, the visit ended, the two items back) and returns each
// answer's time. It stops early, after the round under way, once the rounds
// have taken deskBudget: a desk that slow has failed already, and the test
// stays short.
func deskRounds(t *testing.T, e *testEnv, c *http.Client, rounds int) []time.Duration {
	t.Helper()
	const deskBudget = 10 * time.Second
	start := time.Now()
	var ds []time.Duration
	timed := func(what string, f func() response) {
		start := time.Now()
		r := f()
		ds = append(ds, time.Since(start))
		if r.Status != http.StatusOK && r.Status != http.StatusSeeOther {
			t.Fatalf("desk: %s: %d\n%.300s", what, r.Status, r.Body)
		}
	}
	for n := 0; n < rounds && time.Since(start) < deskBudget; n++ {
		timed("patron scan", func() response { return e.scan(t, c, "/checkout/scan", url.Values{"scan": {"P0001"}}) })
		for _, item := range []string{"I00001", "I00002"} {
			timed("check out "+item, func() response { return e.scan(t, c, "/checkout/scan", url.Values{"scan": {item}}) })
		}
		timed("end the visit", func() response { return e.post(t, c, "/checkout/done", nil) })
		for _, item := range []string{"I00001", "I00002"} {
			timed("check in "+item, func() response { return e.scan(t, c, "/checkin", url.Values{"barcode": {item}}) })
		}
	}
	return ds
}

// median is the middle of ds.
func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// TestHeavyReadMessages: a heavy page past its deadline says what to narrow
// (the Labels form beside the field that chose the labels), and with every
// heavy-read slot taken says "busy, try again" (503, Retry-After); never a
// 500 or a stack trace.
func TestHeavyReadMessages(t *testing.T) {
	setup := func(t *testing.T, cfg web.Config) (*testEnv, *http.Client, *strings.Replacer) {
		e := newSearchEnv(t, 50, db.Options{}, cfg)
		admin := e.adminClient(t)
		r := e.post(t, admin, "/reports/stocktake", url.Values{"branch": {"1"}, "from": {"0"}, "to": {"ZZZZ"}})
		if r.Status != http.StatusSeeOther {
			t.Fatalf("start a stocktake: %d\n%.300s", r.Status, r.Body)
		}
		return e, admin, strings.NewReplacer("{stocktake}", strings.TrimPrefix(r.Location, "/reports/stocktake/"), "{item}", "1", "{patron}", "1")
	}
	check := func(t *testing.T, r response, path string, status int, want string) {
		t.Helper()
		if r.Status != status || !strings.Contains(r.Body, want) {
			t.Errorf("%s: %d, want %d saying %q\n%.400s", path, r.Status, status, want, r.Body)
		}
		if strings.Contains(r.Body, "goroutine ") || strings.Contains(r.Body, ".go:") {
			t.Errorf("%s shows a stack trace:\n%s", path, r.Body)
		}
	}

	t.Run("ErrTooLong", func(t *testing.T) {
		e, c, fill := setup(t, web.Config{HeavyReadTimeout: time.Nanosecond})
		want := map[string]string{
			"LabelsPDF":         "Finding the items took too long and was stopped: narrow it with a later day or one branch.",
			"LabelsPreview":     "Finding the items took too long and was stopped: narrow it with a later day or one branch.",
			"Report":            "The report took longer than 1ns and was stopped: narrow it",
			"ReportCSV":         "The report took longer than 1ns and was stopped: narrow it",
			"StocktakeResults":  "Working out the stocktake took too long and was stopped: stocktake a shorter call number range",
			"StocktakeScanPage": "Working out the stocktake took too long and was stopped: stocktake a shorter call number range",
			"ItemHistory":       "The history took too long to read and was stopped",
			"PatronHistory":     "The history took too long to read and was stopped",
		}
		for _, ep := range heavyEndpoints {
			path := fill.Replace(ep.path)
			r := e.get(t, c, path)
			switch ep.name {
			case "LabelsPDF", "LabelsPreview":
				// Beside the field, on the form kept as it was.
				check(t, r, path, http.StatusUnprocessableEntity, `<p class="field-error" id="since-error">`+want[ep.name])
			default:
				check(t, r, path, http.StatusUnprocessableEntity, want[ep.name])
			}
		}
	})

	t.Run("ErrBusy", func(t *testing.T) {
		e, c, fill := setup(t, web.Config{})
		dbtest.TakeHeavySlots(t, e.DB)
		for _, ep := range heavyEndpoints {
			path := fill.Replace(ep.path)
			r := e.get(t, c, path)
			check(t, r, path, http.StatusServiceUnavailable, "running at once: try again in a moment.")
			if r.Header.Get("Retry-After") == "" {
				t.Errorf("%s busy without Retry-After", path)
			}
		}
		// The desk keeps its read connection meanwhile.
		r := e.scan(t, c, "/checkout/scan", url.Values{"scan": {"P0001"}})
		if r.Status != http.StatusOK {
			t.Errorf("the desk with every heavy-read slot taken: %d\n%.300s", r.Status, r.Body)
		}
	})
}
