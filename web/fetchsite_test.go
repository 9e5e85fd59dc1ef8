package web_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/stacks-ils/stacks/kit/kittest"
)

// getDecisions reads the table of every staff GET route in docs/security.md
// ("Every GET of the staff site"): the pattern, and whether it answers only
// requests from this site's own pages ("same-origin only").
func getDecisions(t *testing.T) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	row := regexp.MustCompile("^\\| `GET ([^`]+)` \\|.*\\| ([^|]+) \\|$")
	for _, m := range kittest.DocTable(t, "../docs/security.md", "Every GET of the staff site", row) {
		out["GET "+m[1]] = strings.HasPrefix(m[2], "same-origin only")
	}
	if len(out) < 30 {
		t.Fatalf("docs/security.md: only %d rows in the table of GET routes", len(out))
	}
	return out
}

// getFrom sends a GET as a browser does when the page was asked for from site
// ("cross-site", "same-site", "same-origin", "none").
func (e *testEnv) getFrom(t *testing.T, c *http.Client, path, site string) response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, e.Srv.URL+path, nil)
	req.Header.Set("Sec-Fetch-Site", site)
	return do(t, c, req)
}

// crossSiteRefusal is what the refusal page says.
const crossSiteRefusal = "opened from a link on another site"

// TestCrossSiteHeavyGetsRefused: every GET of the staff router has a decision in
// docs/security.md's table (a route added tomorrow without one fails here). A GET
// that does heavy work or writes (a report, an export, labels, a stocktake, a
// history) is refused (403, the page saying why) when a signed-in administrator's
// browser is sent to it from another site, and nothing runs: the audit log, which
// the export and every SQL report run write, is unchanged. The same GETs still
// answer from Stacks' own pages (same-origin) and from a typed address or a
// bookmark (none), and the refusal page's link opens the page. The other GETs
// (forms, the desk, searches, bounded lists) stay reachable by a link from anywhere.
func TestCrossSiteHeavyGetsRefused(t *testing.T) {
	e := newDemoEnv(t)
	rs := routes(t, e)
	ids := routeIDs(t, e)
	decisions := getDecisions(t)
	admin := e.client(t)
	if r := e.login(t, admin, "admin", "admin"); r.Status != http.StatusSeeOther {
		t.Fatalf("admin login: %d", r.Status)
	}
	// The query each guarded page runs with: a report's filters, a labels sheet.
	query := map[string]string{
		"/reports/{slug}":         "?branch=",
		"/reports/{slug}/csv":     "?branch=",
		"/reports/labels/preview": "?kind=spine&sheet=a4-3x7&source=since&since=1970-01-01",
		"/reports/labels/pdf":     "?kind=spine&sheet=a4-3x7&source=since&since=1970-01-01",
	}
	audits := func() string { return queryString(t, e, `SELECT CAST(count(*) AS TEXT) FROM audit_log`) }

	before := audits()
	guarded := 0
	seen := map[string]bool{}
	for _, rt := range rs {
		if rt.Method != http.MethodGet {
			continue
		}
		seen[rt.String()] = true
		same, ok := decisions[rt.String()]
		if !ok {
			t.Errorf("%s: not in docs/security.md's table of GET routes: decide whether it does heavy work", rt)
			continue
		}
		path := pathOf(rt.Pattern, ids, "") + query[rt.Pattern]
		r := e.getFrom(t, admin, path, "cross-site")
		checkHeaders(t, rt.String()+" cross-site", r)
		if !same {
			if r.Status == http.StatusForbidden {
				t.Errorf("%s cross-site: 403, but the table says it stays open", rt)
			}
			continue
		}
		guarded++
		if r.Status != http.StatusForbidden || !strings.Contains(r.Body, crossSiteRefusal) {
			t.Errorf("%s cross-site: %d, want 403 with the reason", rt, r.Status)
		}
		if r := e.getFrom(t, admin, path, "same-site"); r.Status != http.StatusForbidden {
			t.Errorf("%s same-site: %d, want 403", rt, r.Status)
		}
	}
	for d := range decisions {
		if !seen[d] {
			t.Errorf("docs/security.md lists %s, which the router does not have", d)
		}
	}
	if guarded < 8 {
		t.Errorf("only %d GET routes answer same-origin only", guarded)
	}
	if after := audits(); after != before {
		t.Errorf("refused cross-site GETs wrote the audit log: %s rows before, %s after", before, after)
	}

	// From Stacks' own pages, a bookmark or the refusal page's link, they answer.
	patron := e.patronPath(t, "P0001")
	for _, site := range []string{"same-origin", "none", ""} {
		for _, path := range []string{"/reports/overdue?branch=", "/reports/overdue/csv?branch=", query["/reports/labels/pdf"], patron + "/history", patron + "/export"} {
			if strings.HasPrefix(path, "?") {
				path = "/reports/labels/pdf" + path
			}
			if r := e.getFrom(t, admin, path, site); r.Status != http.StatusOK {
				t.Errorf("GET %s (Sec-Fetch-Site %q): %d, want 200", path, site, r.Status)
			}
		}
	}
	r := e.getFrom(t, admin, "/reports/overdue?branch=", "cross-site")
	if !strings.Contains(r.Body, `href="/reports/overdue?branch="`) {
		t.Errorf("the refusal page has no link to open the report:\n%s", r.Body)
	}
	if got := queryString(t, e, `SELECT CAST(count(*) AS TEXT) FROM audit_log WHERE action = 'patron.export'`); got != "3" {
		t.Errorf("exports from this site: %s in the audit log, want 3", got)
	}
}

// TestSQLReportRunIsAPost: running a saved SQL report takes a heavy-read slot for
// up to its time limit and writes the audit log, so it is a form post. A GET of
// the report's page with the old run link's query, from another site or not,
// shows the form and runs nothing; a cross-site post to run it or download its
// CSV is refused; the page's own forms run it and download it. Runs are counted
// in the audit log.
func TestSQLReportRunIsAPost(t *testing.T) {
	e := newDemoEnv(t)
	admin := e.client(t)
	if r := e.login(t, admin, "admin", "admin"); r.Status != http.StatusSeeOther {
		t.Fatalf("login: %d", r.Status)
	}
	r := e.post(t, admin, "/admin/sql-reports", url.Values{"name": {"Endless"},
		"sql": {"WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT count(*) FROM n WHERE i = :stop"}})
	if r.Status != http.StatusSeeOther {
		t.Fatalf("save: %d %s", r.Status, r.Body)
	}
	report := r.Location
	r = e.post(t, admin, "/admin/sql-reports", url.Values{"name": {"Items"}, "sql": {"SELECT count(*) AS items FROM items WHERE home_branch_id = :branch"}})
	if r.Status != http.StatusSeeOther {
		t.Fatalf("save: %d %s", r.Status, r.Body)
	}
	items := r.Location
	runs := func() string {
		return queryString(t, e, `SELECT CAST(count(*) AS TEXT) FROM audit_log WHERE action = 'sql_report.run'`)
	}

	for _, site := range []string{"cross-site", "same-site", ""} {
		for _, path := range []string{report + "?run=1&p_stop=0", items + "?run=1&p_branch=1"} {
			r := e.getFrom(t, admin, path, site)
			if r.Status != http.StatusOK || !strings.Contains(r.Body, "Run report") || strings.Contains(r.Body, `class="report-total"`) {
				t.Errorf("GET %s (Sec-Fetch-Site %q): %d, want the form, not run", path, site, r.Status)
			}
		}
		if r := e.getFrom(t, admin, items+"/csv?p_branch=1", site); r.Status != http.StatusMethodNotAllowed {
			t.Errorf("GET %s/csv (Sec-Fetch-Site %q): %d, want 405", items, site, r.Status)
		}
	}
	for _, path := range []string{report + "/run", report + "/csv"} {
		req, _ := http.NewRequest(http.MethodPost, e.Srv.URL+path, strings.NewReader("p_stop=0"))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Sec-Fetch-Site", "cross-site")
		req.Header.Set("Origin", "https://evil.example")
		if r := do(t, admin, req); r.Status != http.StatusForbidden {
			t.Errorf("cross-site POST %s: %d, want 403", path, r.Status)
		}
	}
	if n := runs(); n != "0" {
		t.Fatalf("%s runs in the audit log after the refused requests, want 0", n)
	}

	// Through the page: its run form, then the result's CSV form.
	page := e.get(t, admin, items)
	if !strings.Contains(page.Body, `<form method="post" action="`+items+`/run"`) {
		t.Fatalf("the report's page has no run form:\n%s", page.Body)
	}
	run := e.post(t, admin, items+"/run", url.Values{"p_branch": {"1"}})
	if run.Status != http.StatusOK || !strings.Contains(run.Body, `class="report-total"`) {
		t.Fatalf("run: %d", run.Status)
	}
	if !strings.Contains(run.Body, `<form method="post" action="`+items+`/csv"`) || !strings.Contains(run.Body, `name="p_branch" value="1"`) {
		t.Fatalf("the result has no CSV form with the parameters:\n%s", run.Body)
	}
	csv := e.post(t, admin, items+"/csv", url.Values{"p_branch": {"1"}})
	if csv.Status != http.StatusOK || !strings.HasPrefix(csv.Body, "items\r\n") {
		t.Errorf("csv: %d %q", csv.Status, csv.Body)
	}
	if n := runs(); n != "2" {
		t.Errorf("%s runs in the audit log, want 2 (the page and the CSV)", n)
	}
}
