package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/copycat"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/reports"
	"github.com/stacks-ils/stacks/web"
)

// route is one method and pattern of the router.
type route struct{ Method, Pattern string }

func (r route) String() string { return r.Method + " " + r.Pattern }

// admin reports whether the route is an administration page.
func (r route) admin() bool { return strings.HasPrefix(r.Pattern, "/admin") }

// publicRoutes answer without signing in. Every other route is for staff: a test
// below fails for any route, old or new, that lets a stranger in.
var publicRoutes = map[string]bool{
	"GET /healthz":     true,
	"GET /static/*":    true,
	"GET /favicon.ico": true,
	"GET /login":       true,
	"POST /login":      true,
	"POST /logout":     true, // signs out whoever is signed in, and sends strangers to the login page
	"GET /metrics":     true, // administrators and the configured scraper addresses only: checked below
}

// routes lists every method and pattern of the router, as chi.Walk finds them. The
// static file handler answers every method; GET stands for it.
func routes(t *testing.T, e *testEnv) []route {
	t.Helper()
	var out []route
	err := chi.Walk(e.Web.Router(), func(method, pattern string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		if pattern == "/static/*" && method != http.MethodGet {
			return nil
		}
		out = append(out, route{method, pattern})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	if len(out) < 50 {
		t.Fatalf("chi.Walk found only %d routes: %v", len(out), out)
	}
	return out
}

// routeIDs are real ids from the demo library for each kind of {id} in a pattern,
// by the pattern's prefix, or for one pattern.
func routeIDs(t *testing.T, e *testEnv) map[string]string {
	t.Helper()
	ids := map[string]string{}
	// The demo library has no saved SQL report and no stocktake: make one of each.
	rs := reports.NewService(e.DB, time.Minute, nil)
	if _, err := rs.StartStocktake(context.Background(), stacks.System, reports.StocktakeInput{BranchID: 1, From: "FIC A", To: "FIC C"}); err != nil {
		t.Fatal(err)
	}
	if _, err := rs.SaveReport(context.Background(), stacks.System, 0, reports.SavedInput{Name: "Items", SQL: "SELECT count(*) FROM items"}); err != nil {
		t.Fatal(err)
	}
	err := e.DB.Read(context.Background(), func(tx *db.Tx) error {
		for prefix, q := range map[string]string{
			"/admin/sql-reports/":       `SELECT max(id) FROM saved_reports`,
			"/reports/stocktake/":       `SELECT max(id) FROM stocktakes`,
			"/patrons/":                 `SELECT id FROM patrons WHERE card = 'P0002'`,
			"/records/":                 `SELECT record_id FROM items WHERE barcode = 'I00010'`,
			"/items/":                   `SELECT id FROM items WHERE barcode = 'I00009'`,
			"/holds/":                   `SELECT min(id) FROM holds WHERE status = 'queued'`,
			"/admin/rules/":             `SELECT max(id) FROM circ_rules`,
			"/admin/calendar/branches/": `SELECT id FROM branches WHERE code = 'EAS'`,
			"/admin/calendar/days/":     `SELECT max(id) FROM closed_days`,
			"/admin/sip/":               `SELECT id FROM sip_accounts WHERE username = 'kiosk'`,
			"/admin/notices/":           `SELECT max(id) FROM notice_messages`,
			// P0002 owes money: the purge is refused, and the page says why.
			"/admin/patrons/": `SELECT id FROM patrons WHERE card = 'P0002'`,
			"/receipts/":      `SELECT min(id) FROM ledger WHERE kind = 'payment'`,
			// A slip is printed for a hold on the shelf.
			"/holds/{id}/slip": `SELECT min(id) FROM holds WHERE status = 'waiting'`,
		} {
			var id int64
			if err := tx.QueryRow(q).Scan(&id); err != nil {
				return fmt.Errorf("%s: %w", q, err)
			}
			ids[prefix] = fmt.Sprint(id)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// A transit slip is printed for a checkin that sent an item away; the demo
	// library has none, so send one.
	sent := transferCheckin(t, e)
	ids["/transfers/slip/{id}"] = fmt.Sprint(sent)
	// The item it sent has a slip of its own transit too.
	ids["/transfers/item/{id}/slip"] = queryString(t, e, `SELECT CAST(item_id AS TEXT) FROM checkins WHERE id = ?`, sent)
	// Notice templates are named, not numbered.
	ids["/admin/notices/templates/{id}"] = "predue"
	ids["/admin/notices/templates/{id}/reset"] = "predue"
	// A copy cataloguing target (disabled: no test searches it).
	target, err := copycat.NewService(e.DB).AddTarget(context.Background(), stacks.System, copycat.Target{Name: "Union catalogue", Kind: copycat.Z3950, Address: "127.0.0.1:9/Books"})
	if err != nil {
		t.Fatal(err)
	}
	ids["/admin/copycat/"] = fmt.Sprint(target.ID)
	// A patron load's progress page: one run in the background, to its end.
	ids["/admin/patrons/import/{id}"] = backgroundPatronLoad(t, e)
	// A staged MARC import's review.
	admin := e.client(t)
	e.login(t, admin, "admin", "admin")
	ids["/admin/import/batches/"] = stageBatch(t, e, admin)
	return ids
}

// pathOf turns a pattern into a path: {slug} a report's name, {id} becomes id (or, if id is "", the real
// id for the pattern or for the longest prefix of it in ids), * a static file.
func pathOf(pattern string, ids map[string]string, id string) string {
	p := strings.Replace(pattern, "/static/*", "/static/stacks.css", 1)
	// A standard report's slug.
	p = strings.Replace(p, "{slug}", "overdue", 1)
	if !strings.Contains(p, "{id}") {
		return p
	}
	if id == "" && ids[pattern] != "" {
		id = ids[pattern]
	}
	if id == "" {
		best := ""
		for prefix := range ids {
			if strings.HasPrefix(pattern, prefix) && len(prefix) > len(best) && !strings.Contains(prefix, "{") {
				best = prefix
			}
		}
		id = ids[best]
	}
	return strings.Replace(p, "{id}", id, 1)
}

// checkHeaders checks the security headers every answer carries.
func checkHeaders(t *testing.T, what string, r response) {
	t.Helper()
	csp := r.Header.Get("Content-Security-Policy")
	switch {
	case csp == "":
		t.Errorf("%s: no Content-Security-Policy", what)
	case strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval"):
		t.Errorf("%s: CSP allows inline script or eval: %q", what, csp)
	case !strings.Contains(csp, "frame-ancestors 'none'"):
		t.Errorf("%s: CSP does not forbid framing: %q", what, csp)
	case !strings.Contains(csp, "script-src 'self'") && !strings.Contains(csp, "default-src 'self'"):
		t.Errorf("%s: CSP does not restrict script sources: %q", what, csp)
	}
	if got := r.Header.Get("X-Content-Type-Options"); got != "nosniff" {
		t.Errorf("%s: X-Content-Type-Options %q, want nosniff", what, got)
	}
	if r.Header.Get("Referrer-Policy") == "" {
		t.Errorf("%s: no Referrer-Policy", what)
	}
	// Pages and fragments show patrons' data: no cache keeps them. Only the public
	// assets are cached.
	public := strings.Contains(what, "/static/") || strings.Contains(what, "/favicon.ico")
	if cc := r.Header.Get("Cache-Control"); !public && cc != "no-store" {
		t.Errorf("%s: Cache-Control %q, want no-store", what, cc)
	}
	if strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") && hasInlineScript(r.Body) {
		t.Errorf("%s: the page has inline script", what)
	}
}

// request sends one request: a same-origin form post (as a browser does) when form
// is not nil, else a GET.
func (e *testEnv) request(t *testing.T, c *http.Client, method, path string, form url.Values) response {
	t.Helper()
	if method == http.MethodPost {
		if form == nil {
			form = url.Values{}
		}
		return e.post(t, c, path, form)
	}
	req, err := http.NewRequest(method, e.Srv.URL+path, nil)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	return do(t, c, req)
}

// dbDigest is every row of the tables staff actions change, as text, to show that
// refused requests changed nothing.
func dbDigest(t *testing.T, e *testEnv) string {
	t.Helper()
	var b strings.Builder
	err := e.DB.Read(context.Background(), func(tx *db.Tx) error {
		for _, table := range []string{"patrons", "items", "records", "loans", "holds", "ledger", "circ_rules",
			"closed_days", "branches", "preferences", "staff_users", "checkins", "audit_log"} {
			// Each table's first column is its primary key.
			rows, err := tx.Query(`SELECT * FROM ` + table + ` ORDER BY 1`)
			if err != nil {
				return err
			}
			cols, _ := rows.Columns()
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			for rows.Next() {
				if err := rows.Scan(ptrs...); err != nil {
					rows.Close()
					return err
				}
				fmt.Fprintf(&b, "%s %q\n", table, vals)
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestRoutesAccessControl walks every route of the router and proves the roles:
// a stranger gets the login page from every staff route, GET or POST; circulation
// staff are refused every administration route and reach every other page; a
// cross-site form post to any route, public ones included, is refused and changes
// nothing. Every answer carries the security headers.
func TestRoutesAccessControl(t *testing.T) {
	e := newDemoEnv(t)
	rs := routes(t, e)
	ids := routeIDs(t, e)

	t.Run("AnonymousGetsLogin", func(t *testing.T) {
		c := e.client(t)
		for _, rt := range rs {
			r := e.request(t, c, rt.Method, pathOf(rt.Pattern, ids, ""), url.Values{})
			checkHeaders(t, rt.String(), r)
			if publicRoutes[rt.String()] {
				if rt.Pattern == "/metrics" && r.Status == http.StatusOK {
					t.Errorf("%s: a stranger got the metrics", rt)
				}
				continue
			}
			if r.Status != http.StatusSeeOther || !strings.HasPrefix(r.Location, "/login") {
				t.Errorf("%s anonymously: %d to %q, want 303 to /login", rt, r.Status, r.Location)
			}
		}
	})

	t.Run("CirculationStaffRefusedAdmin", func(t *testing.T) {
		c := e.deskClient(t)
		for _, rt := range rs {
			if !rt.admin() {
				continue
			}
			r := e.request(t, c, rt.Method, pathOf(rt.Pattern, ids, ""), url.Values{})
			checkHeaders(t, rt.String(), r)
			if r.Status != http.StatusForbidden || !strings.Contains(r.Body, "for administrators") {
				t.Errorf("%s as circulation staff: %d, want 403 with the reason", rt, r.Status)
			}
		}
		if r := e.get(t, c, "/metrics"); r.Status == http.StatusOK {
			t.Errorf("GET /metrics as circulation staff: 200")
		}
	})

	t.Run("CirculationStaffReachStaffPages", func(t *testing.T) {
		c := e.deskClient(t)
		for _, rt := range rs {
			if rt.admin() || rt.Method != http.MethodGet || publicRoutes[rt.String()] {
				continue
			}
			r := e.get(t, c, pathOf(rt.Pattern, ids, ""))
			checkHeaders(t, rt.String(), r)
			if r.Status != http.StatusOK && r.Status != http.StatusSeeOther {
				t.Errorf("%s as circulation staff: %d, want the page", rt, r.Status)
			}
			if r.Status == http.StatusSeeOther && strings.HasPrefix(r.Location, "/login") {
				t.Errorf("%s as circulation staff: sent to log in", rt)
			}
		}
	})

	t.Run("AdministratorReachesEveryPage", func(t *testing.T) {
		c := e.client(t)
		if r := e.login(t, c, "admin", "admin"); r.Status != http.StatusSeeOther {
			t.Fatalf("admin login: %d", r.Status)
		}
		for _, rt := range rs {
			if rt.Method != http.MethodGet || publicRoutes[rt.String()] {
				continue
			}
			r := e.get(t, c, pathOf(rt.Pattern, ids, ""))
			checkHeaders(t, rt.String(), r)
			if r.Status != http.StatusOK && r.Status != http.StatusSeeOther {
				t.Errorf("%s as administrator: %d, want the page", rt, r.Status)
			}
		}
	})

	t.Run("CrossSitePostRefused", func(t *testing.T) {
		c := e.client(t)
		if r := e.login(t, c, "admin", "admin"); r.Status != http.StatusSeeOther {
			t.Fatalf("admin login: %d", r.Status)
		}
		before := dbDigest(t, e)
		posts := 0
		for _, rt := range rs {
			if rt.Method != http.MethodPost {
				continue
			}
			posts++
			for name, hdr := range map[string]map[string]string{
				"SecFetchSite": {"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"},
				"OriginOnly":   {"Origin": "https://evil.example"},
				"SameSiteOnly": {"Sec-Fetch-Site": "same-site"},
			} {
				form := url.Values{"barcode": {"I00001"}, "card": {"P0001"}, "note": {"forged"}, "reason": {"forged"},
					"amount": {"1.00"}, "library_name": {"Forged"}, "username": {"admin"}, "password": {"admin"}}
				req, _ := http.NewRequest(http.MethodPost, e.Srv.URL+pathOf(rt.Pattern, ids, ""), strings.NewReader(form.Encode()))
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				for k, v := range hdr {
					req.Header.Set(k, v)
				}
				r := do(t, c, req)
				if r.Status != http.StatusForbidden {
					t.Errorf("%s, cross-origin (%s): %d, want 403", rt, name, r.Status)
				}
				if r.Header.Get("X-Content-Type-Options") != "nosniff" {
					t.Errorf("%s, cross-origin (%s): the refusal lacks nosniff", rt, name)
				}
			}
		}
		if posts < 30 {
			t.Fatalf("only %d POST routes found", posts)
		}
		if after := dbDigest(t, e); after != before {
			t.Error("refused cross-site posts changed the database")
		}
		// Still signed in: the forged logout did nothing.
		if r := e.get(t, c, "/"); r.Status != http.StatusOK {
			t.Errorf("after the refused posts: GET / %d, want 200", r.Status)
		}
	})
}

// TestSecureCookies: with SecureCookies (stacks serve --secure-cookies, for a site
// reached over HTTPS through a proxy) the session cookie is marked Secure, as well as
// HttpOnly and SameSite=Lax; without it, it is not (a browser would not send it
// back over plain HTTP).
func TestSecureCookies(t *testing.T) {
	for _, secure := range []bool{false, true} {
		t.Run(fmt.Sprint("Secure=", secure), func(t *testing.T) {
			e := newEnv(t)
			ts := httptest.NewServer(web.New(web.Config{DB: e.DB, SecureCookies: secure}))
			t.Cleanup(ts.Close)
			srv := ts.URL
			form := url.Values{"username": {"desk"}, "password": {"desk"}}
			req, _ := http.NewRequest(http.MethodPost, srv+"/login", strings.NewReader(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			r := do(t, e.client(t), req)
			sc := r.Header.Get("Set-Cookie")
			for _, want := range []string{"stacks_session=", "HttpOnly", "SameSite=Lax"} {
				if !strings.Contains(sc, want) {
					t.Errorf("Set-Cookie %q lacks %s", sc, want)
				}
			}
			if got := strings.Contains(sc, "; Secure"); got != secure {
				t.Errorf("Set-Cookie %q: Secure is %v, want %v", sc, got, secure)
			}
		})
	}
}
