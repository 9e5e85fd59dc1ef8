package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"

	"github.com/stacks-ils/stacks/deskclient"
	"github.com/stacks-ils/stacks/stackstest"
)

// deskMode is one way of serving the desk session for timing.
type deskMode struct {
	name  string
	start func(t *testing.T) *server
	// timingOnly modes run in make desk-timing only: TestLighttpd already takes
	// them through the desk session in make test.
	timingOnly bool
}

// deskModes are the ways of serving, side by side: a persistent server; a new CGI
// process for every request, under Go's CGI host (stacks serve --cgi) and under
// lighttpd's mod_cgi, as a real host runs it; and one stacks fcgi behind lighttpd's
// mod_fastcgi.
var deskModes = []deskMode{
	{name: "server", start: func(t *testing.T) *server { return startServer(t) }},
	{name: "cgi", start: func(t *testing.T) *server { return startServer(t, "--cgi") }},
	{name: "lighttpd-cgi", start: func(t *testing.T) *server { return startLighttpd(t, httpdCGI, lighttpdCGIMount) }, timingOnly: true},
	{name: "lighttpd-fcgi", start: func(t *testing.T) *server { return startLighttpd(t, httpdFastCGI, lighttpdFCGIMount) }, timingOnly: true},
}

// timedBrowserSession runs the browser desk session against srv (a fresh demo
// library) and times each step, splitting it by the Server-Timing of every
// response.
func timedBrowserSession(t *testing.T, browser playwright.Browser, srv *server) []stepResult {
	page, _ := newPage(t, browser)
	var mu sync.Mutex
	var seen []deskclient.Timing
	page.OnResponse(func(r playwright.Response) {
		// Only what the event already carries: a call back into the driver from
		// an event handler would block the dispatcher.
		h := r.Headers()["server-timing"]
		var tm deskclient.Timing
		tm.App, tm.DB, tm.Statements, _ = deskclient.ParseServerTiming(h)
		tm.Selects = deskclient.ParseSelects(h)
		// A page is an answer staff see: a document (not a redirect), or a
		// desk script's answer to a scan (a fragment swapped into the page).
		req := r.Request()
		answer := req.ResourceType() == "document" || req.Headers()["hx-request"] == "true"
		tm.Page = answer && (r.Status() < 300 || r.Status() >= 400)
		mu.Lock()
		seen = append(seen, tm)
		mu.Unlock()
	})
	d := &desk{srv: srv, page: page}
	var out []stepResult
	for _, step := range deskSteps() {
		mu.Lock()
		first := len(seen)
		mu.Unlock()
		start := time.Now()
		if !t.Run(step.name, func(t *testing.T) { step.run(t, d) }) {
			logPage(t, page)
			t.FailNow()
		}
		r := stepResult{Name: step.name, Wall: time.Since(start)}
		mu.Lock()
		for _, tm := range seen[first:] {
			r.Requests++
			r.App += tm.App
			r.DB += tm.DB
			r.Statements += tm.Statements
			r.Selects += tm.Selects
			if tm.Page {
				r.Pages++
			}
		}
		mu.Unlock()
		out = append(out, r)
	}
	return out
}

// TestDeskTiming times the desk session in each mode, in the browser and with the
// scripted client. In make test it runs the scripted session once per mode (the
// browser session is TestDeskSession); with STACKS_DESK_TIMING=N (make
// desk-timing) it runs each N times and writes desk-timing/results.json and
// results.md with the medians.
func TestDeskTiming(t *testing.T) {
	runs, _ := strconv.Atoi(os.Getenv("STACKS_DESK_TIMING"))
	if runs == 0 {
		// Not timing: a check like the others, run beside them. Timed, it
		// runs alone (make desk-timing runs only this test).
		t.Parallel()
	}
	startLoad := loadAverage()
	var results []sessionRun
	var browser playwright.Browser
	if runs > 0 {
		browser = launchBrowser(t)
	}
	// Each round runs every mode once, so that a shared machine whose load changes
	// during the hour slows the modes alike rather than whichever ran then.
	for i := 0; i < max(runs, 1); i++ {
		for _, mode := range deskModes {
			if mode.timingOnly && runs == 0 {
				continue
			}
			t.Run(mode.name, func(t *testing.T) {
				if runs > 0 {
					t.Run("browser", func(t *testing.T) {
						steps := timedBrowserSession(t, browser, mode.start(t))
						results = append(results, sessionRun{Mode: mode.name, Client: "browser", Steps: steps})
					})
				}
				t.Run("scripted", func(t *testing.T) {
					srv := mode.start(t)
					steps, err := runScriptedSession(context.Background(), srv.BaseURL)
					if err != nil {
						t.Fatal(err)
					}
					results = append(results, sessionRun{Mode: mode.name, Client: "scripted", Steps: steps})
					for _, s := range steps {
						if s.Pages == 0 || s.Statements == 0 {
							t.Errorf("step %s: %d pages, %d statements: Server-Timing not read", s.Name, s.Pages, s.Statements)
						}
					}
				})
			})
		}
	}
	if runs == 0 || t.Failed() {
		return
	}
	sums := summarize(results)
	dir := filepath.Join(stackstest.ModuleRoot(t), "desk-timing")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	js, _ := json.MarshalIndent(map[string]any{"when": time.Now().UTC().Format(time.RFC3339), "runs": results, "summaries": sums}, "", "  ")
	// When it ran is in results.json and in the commit that records it; the
	// page says what was run and how loaded the machine was.
	md := "# Desk session timing\n\nMeasured with `make desk-timing` (STACKS_DESK_TIMING=" + strconv.Itoa(runs) + "), the modes taking turns run by run; load average " +
		startLoad + " at the start, " + loadAverage() + " at the end.\n" + markdown(sums)
	for name, b := range map[string][]byte{"results.json": js, "results.md": []byte(md)} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Log("\n" + md)
}

// loadAverage is the machine's load over 1, 5 and 15 minutes (Linux), for
// reports: on a shared machine it says how far to trust a time.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "unknown"
}
