package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/dbtest"
	"github.com/stacks-ils/stacks/passwords"
	"github.com/stacks-ils/stacks/staff"
	"github.com/stacks-ils/stacks/web"

	"github.com/stacks-ils/stacks/kit/kittest"
	"golang.org/x/crypto/bcrypt"
)

type testEnv struct {
	DB    *db.DB
	Clock *dbtest.Clock
	Srv   *httptest.Server
	Web   *web.Server
}

// newEnv starts a server on a fresh database with one branch and two accounts:
// desk/desk (circulation) and admin/admin (administrator).
func newEnv(t *testing.T) *testEnv {
	t.Helper()
	c := dbtest.NewClock(dbtest.Monday)
	d := dbtest.Copy(t, fmt.Sprintf("web-newEnv-bcrypt%d", passwords.BcryptCost), func(d *db.DB) error {
		d.Now = c.Now
		return d.Write(context.Background(), func(tx *db.Tx) error {
			if _, err := tx.Exec(`INSERT INTO branches (code, name) VALUES ('CEN', 'Central')`); err != nil {
				return err
			}
			if _, err := staff.Create(tx, staff.NewUser{Username: "desk", DisplayName: "Morgan Desk", Password: "desk", Role: staff.RoleCirculation, BranchCode: "CEN"}); err != nil {
				return err
			}
			_, err := staff.Create(tx, staff.NewUser{Username: "admin", DisplayName: "Avery Admin", Password: "admin", Role: staff.RoleAdmin, BranchCode: "CEN"})
			return err
		})
	}, db.Options{})
	d.Now = c.Now
	w := web.New(web.Config{DB: d, CachePreferences: true})
	srv := httptest.NewServer(w)
	t.Cleanup(srv.Close)
	return &testEnv{DB: d, Clock: c, Srv: srv, Web: w}
}

// client is a browser-like client: a cookie jar, no automatic redirects.
func (e *testEnv) client(t testing.TB) *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{
		Jar: jar,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

type response = kittest.Response

func do(t testing.TB, c *http.Client, req *http.Request) response { return kittest.Do(t, c, req) }

func (e *testEnv) get(t *testing.T, c *http.Client, path string) response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, e.Srv.URL+path, nil)
	return do(t, c, req)
}

// post sends a same-origin form post, as a browser does.
func (e *testEnv) post(t *testing.T, c *http.Client, path string, form url.Values) response {
	t.Helper()
	return do(t, c, e.formRequest(path, form))
}

// formRequest is a same-origin form post, as a browser sends it.
func (e *testEnv) formRequest(path string, form url.Values) *http.Request {
	req, _ := http.NewRequest(http.MethodPost, e.Srv.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", e.Srv.URL)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	return req
}

func (e *testEnv) login(t *testing.T, c *http.Client, user, password string) response {
	t.Helper()
	return e.post(t, c, "/login", url.Values{"username": {user}, "password": {password}})
}

func TestLogin(t *testing.T) {
	e := newEnv(t)

	t.Run("OK", func(t *testing.T) {
		c := e.client(t)
		r := e.login(t, c, "desk", "desk")
		if r.Status != http.StatusSeeOther || r.Location != "/" {
			t.Fatalf("login: %d to %q, want 303 to /", r.Status, r.Location)
		}
		r = e.get(t, c, "/")
		if r.Status != http.StatusOK {
			t.Fatalf("GET / after login: %d", r.Status)
		}
		for _, want := range []string{"Morgan Desk", "Log out", "Check out", "Check in", "Patrons", "Search", "Holds", "Central"} {
			if !strings.Contains(r.Body, want) {
				t.Errorf("start page lacks %q", want)
			}
		}
		if strings.Contains(r.Body, "Administration") {
			t.Error("circulation staff see the Administration link")
		}
	})

	t.Run("NextAfterLogin", func(t *testing.T) {
		c := e.client(t)
		r := e.get(t, c, "/patrons?q=x")
		if r.Status != http.StatusSeeOther || !strings.HasPrefix(r.Location, "/login?next=") {
			t.Fatalf("anonymous GET: %d to %q", r.Status, r.Location)
		}
		r = e.post(t, c, "/login", url.Values{"username": {"desk"}, "password": {"desk"}, "next": {"/patrons?q=x"}})
		if r.Location != "/patrons?q=x" {
			t.Fatalf("login went to %q, want the page asked for", r.Location)
		}
	})

	t.Run("ErrOpenRedirect", func(t *testing.T) {
		c := e.client(t)
		hostile := []string{"//evil.example/", "https://evil.example/", "/\\evil.example", "/\t/evil.example", "/\n/evil.example", "/\x0b/evil.example", "/evil.example\\"}
		for _, next := range hostile {
			r := e.post(t, c, "/login", url.Values{"username": {"desk"}, "password": {"desk"}, "next": {next}})
			if r.Location != "/" {
				t.Errorf("next=%q redirected to %q, want /", next, r.Location)
			}
		}
		// Signed in, the login page sends the browser straight on: the same check.
		for _, next := range hostile {
			r := e.get(t, c, "/login?next="+url.QueryEscape(next))
			if r.Status != http.StatusSeeOther || r.Location != "/" {
				t.Errorf("GET /login?next=%q signed in: %d to %q, want 303 to /", next, r.Status, r.Location)
			}
		}
	})

	t.Run("ErrWrongPassword", func(t *testing.T) {
		c := e.client(t)
		r := e.login(t, c, "admin", "wrong")
		if r.Status != http.StatusUnauthorized {
			t.Fatalf("wrong password: status %d, want 401", r.Status)
		}
		if !strings.Contains(r.Body, "not right") || !strings.Contains(r.Body, `value="admin"`) {
			t.Error("the login form does not say the password was wrong, or lost the username")
		}
		if r := e.get(t, c, "/"); r.Status != http.StatusSeeOther {
			t.Fatalf("GET / after failed login: %d, want a redirect to login", r.Status)
		}
	})

	t.Run("ErrUnknownUser", func(t *testing.T) {
		r := e.login(t, e.client(t), "nobody", "desk")
		if r.Status != http.StatusUnauthorized || !strings.Contains(r.Body, "not right") {
			t.Fatalf("unknown user: %d", r.Status)
		}
	})

	t.Run("ErrEmpty", func(t *testing.T) {
		r := e.login(t, e.client(t), "", "")
		if r.Status != http.StatusUnprocessableEntity || !strings.Contains(r.Body, "Enter your username and password") {
			t.Fatalf("empty login: %d", r.Status)
		}
	})
}

func TestSessionTokenRenewedAtLogin(t *testing.T) {
	e := newEnv(t)
	c := e.client(t)
	e.get(t, c, "/login")
	// Plant a session first, as a fixation attacker would.
	e.login(t, c, "desk", "wrong")
	u, _ := url.Parse(e.Srv.URL)
	before := cookieValue(c, u)
	e.login(t, c, "desk", "desk")
	after := cookieValue(c, u)
	if after == "" || after == before {
		t.Fatalf("session token not renewed at login: before %q after %q", before, after)
	}
	r := e.post(t, c, "/logout", nil)
	if r.Status != http.StatusSeeOther || r.Location != "/login" {
		t.Fatalf("logout: %d to %q", r.Status, r.Location)
	}
	if cookieValue(c, u) == after {
		t.Fatal("session token not renewed at logout")
	}
	// The old token no longer signs anyone in.
	old := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, _ := http.NewRequest(http.MethodGet, e.Srv.URL+"/", nil)
	req.AddCookie(&http.Cookie{Name: "stacks_session", Value: after})
	if r := do(t, old, req); r.Status != http.StatusSeeOther {
		t.Fatalf("old token after logout: %d, want a redirect to login", r.Status)
	}
	// And the login page says so.
	if r := e.get(t, c, "/login"); !strings.Contains(r.Body, "You have logged out.") {
		t.Error("no logout message on the login page")
	}
}

func cookieValue(c *http.Client, u *url.URL) string {
	for _, ck := range c.Jar.Cookies(u) {
		if ck.Name == "stacks_session" {
			return ck.Value
		}
	}
	return ""
}

func TestSessionCookieFlags(t *testing.T) {
	e := newEnv(t)
	r := e.login(t, e.client(t), "desk", "desk")
	sc := r.Header.Get("Set-Cookie")
	for _, want := range []string{"stacks_session=", "HttpOnly", "SameSite=Lax", "Path=/"} {
		if !strings.Contains(sc, want) {
			t.Errorf("Set-Cookie %q lacks %s", sc, want)
		}
	}
}

func TestLoginThrottle(t *testing.T) {
	e := newEnv(t)
	c := e.client(t)
	for i := 0; i < passwords.DefaultThrottle.MaxFailures; i++ {
		if r := e.login(t, c, "desk", "wrong"); r.Status != http.StatusUnauthorized {
			t.Fatalf("failure %d: status %d", i+1, r.Status)
		}
	}
	// Locked now: even the right password is refused, with the reason.
	r := e.login(t, c, "desk", "desk")
	if r.Status != http.StatusTooManyRequests || !strings.Contains(r.Body, "Too many failed sign-ins") {
		t.Fatalf("after %d failures: status %d, want 429 with a message", passwords.DefaultThrottle.MaxFailures, r.Status)
	}
	// Another account from the same address still signs in: desks share addresses.
	if r := e.login(t, e.client(t), "admin", "admin"); r.Status != http.StatusSeeOther {
		t.Fatalf("other account from the same address: %d, want 303", r.Status)
	}
	// After the lockout the right password works again.
	e.Clock.Advance(passwords.DefaultThrottle.Lockout + time.Second)
	if r := e.login(t, c, "desk", "desk"); r.Status != http.StatusSeeOther {
		t.Fatalf("after the lockout: %d, want 303", r.Status)
	}

	// Guessing across many accounts from one address locks the address.
	for i := 0; i < passwords.DefaultThrottle.MaxAddrFailures; i++ {
		e.login(t, c, fmt.Sprintf("guess%d", i), "wrong")
	}
	if r := e.login(t, e.client(t), "admin", "admin"); r.Status != http.StatusTooManyRequests || !strings.Contains(r.Body, "this computer") {
		t.Fatalf("after %d failures from one address: %d, want 429", passwords.DefaultThrottle.MaxAddrFailures, r.Status)
	}
}

func TestIdleTimeout(t *testing.T) {
	e := newEnv(t)
	c := e.client(t)
	e.login(t, c, "desk", "desk")

	// Activity within the timeout keeps the session alive, past the timeout in total.
	for i := 0; i < 4; i++ {
		e.Clock.Advance(20 * time.Minute)
		if r := e.get(t, c, "/"); r.Status != http.StatusOK {
			t.Fatalf("request %d, 20 minutes after the last: %d, want 200", i, r.Status)
		}
	}
	e.Clock.Advance(31 * time.Minute)
	r := e.get(t, c, "/")
	if r.Status != http.StatusSeeOther || !strings.HasPrefix(r.Location, "/login") {
		t.Fatalf("after 31 idle minutes: %d to %q, want a redirect to login", r.Status, r.Location)
	}
	if r := e.get(t, c, r.Location); !strings.Contains(r.Body, "without activity") {
		t.Error("the login page does not say why the user was signed out")
	}
}

func TestCrossOriginPostRefused(t *testing.T) {
	e := newEnv(t)
	c := e.client(t)
	e.login(t, c, "desk", "desk")
	for name, hdr := range map[string]map[string]string{
		"SecFetchSite": {"Sec-Fetch-Site": "cross-site"},
		"Origin":       {"Origin": "https://evil.example"},
	} {
		t.Run(name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, e.Srv.URL+"/logout", strings.NewReader(""))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			for k, v := range hdr {
				req.Header.Set(k, v)
			}
			if r := do(t, c, req); r.Status != http.StatusForbidden {
				t.Fatalf("cross-origin POST: %d, want 403", r.Status)
			}
		})
	}
	// Still signed in: the forged logout did nothing.
	if r := e.get(t, c, "/"); r.Status != http.StatusOK {
		t.Fatalf("after refused cross-origin posts: %d, want 200", r.Status)
	}
	// A cross-origin login attempt is refused too.
	req, _ := http.NewRequest(http.MethodPost, e.Srv.URL+"/login", strings.NewReader("username=desk&password=desk"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	if r := do(t, e.client(t), req); r.Status != http.StatusForbidden {
		t.Fatalf("cross-origin login: %d, want 403", r.Status)
	}
}

func TestAnonymousRedirectedToLogin(t *testing.T) {
	e := newEnv(t)
	c := e.client(t)
	for _, path := range []string{"/", "/checkout", "/checkin", "/patrons", "/search?q=x", "/holds", "/admin", "/no/such/page"} {
		r := e.get(t, c, path)
		if r.Status != http.StatusSeeOther || !strings.HasPrefix(r.Location, "/login") {
			t.Errorf("GET %s anonymously: %d to %q, want 303 to /login", path, r.Status, r.Location)
		}
	}
	for _, path := range []string{"/healthz", "/login", "/static/stacks.css"} {
		if r := e.get(t, c, path); r.Status != http.StatusOK {
			t.Errorf("GET %s anonymously: %d, want 200", path, r.Status)
		}
	}
}

func TestNotFoundWhenSignedIn(t *testing.T) {
	e := newEnv(t)
	c := e.client(t)
	e.login(t, c, "desk", "desk")
	r := e.get(t, c, "/no/such/page")
	if r.Status != http.StatusNotFound || !strings.Contains(r.Body, "There is no page at /no/such/page") {
		t.Fatalf("unknown page when signed in: %d", r.Status)
	}
}

var serverTimingRE = regexp.MustCompile(`^app;dur=\d+\.\d+, db;dur=\d+\.\d+, sql;desc="(\d+)", sel;desc="(\d+)"$`)

func TestServerTiming(t *testing.T) {
	e := newEnv(t)
	c := e.client(t)
	e.login(t, c, "desk", "desk")
	r := e.get(t, c, "/")
	m := serverTimingRE.FindStringSubmatch(r.Header.Get("Server-Timing"))
	if m == nil {
		t.Fatalf("Server-Timing %q does not match %s", r.Header.Get("Server-Timing"), serverTimingRE)
	}
	if m[1] == "0" {
		t.Error("the start page ran no SQL statements by Server-Timing's count")
	}
	r = e.get(t, c, "/login")
	if !serverTimingRE.MatchString(r.Header.Get("Server-Timing")) {
		t.Errorf("login page Server-Timing %q", r.Header.Get("Server-Timing"))
	}
}

func TestSecurityHeaders(t *testing.T) {
	e := newEnv(t)
	r := e.get(t, e.client(t), "/login")
	csp := r.Header.Get("Content-Security-Policy")
	if !strings.Contains(csp, "frame-ancestors 'none'") || strings.Contains(csp, "unsafe-inline") {
		t.Errorf("CSP %q", csp)
	}
	if r.Header.Get("X-Content-Type-Options") != "nosniff" || r.Header.Get("Referrer-Policy") == "" {
		t.Errorf("headers %v", r.Header)
	}
}

func TestStaticAssetsCached(t *testing.T) {
	e := newEnv(t)
	r := e.get(t, e.client(t), "/static/stacks.css")
	if r.Status != 200 || !strings.Contains(r.Header.Get("Cache-Control"), "immutable") || !strings.Contains(r.Body, "font-family") {
		t.Fatalf("stylesheet: %d %q", r.Status, r.Header.Get("Cache-Control"))
	}
}

// TestFavicon: browsers ask for /favicon.ico on every site, signed in or not;
// pages link the same icon.
func TestFavicon(t *testing.T) {
	e := newEnv(t)
	c := e.client(t)
	r := e.get(t, c, "/favicon.ico")
	if r.Status != 200 || r.Header.Get("Content-Type") != "image/x-icon" || !strings.HasPrefix(r.Body, "\x00\x00\x01\x00") {
		t.Fatalf("/favicon.ico: %d %q, want 200 and an icon", r.Status, r.Header.Get("Content-Type"))
	}
	if r := e.get(t, c, "/login"); !strings.Contains(r.Body, `<link rel="icon" href="/static/favicon.ico?v=`) {
		t.Errorf("the login page does not link the icon")
	}
}

func TestHealthz(t *testing.T) {
	e := newEnv(t)
	r := e.get(t, e.client(t), "/healthz")
	if r.Status != 200 || strings.TrimSpace(r.Body) != "ok" {
		t.Fatalf("healthz: %d %q", r.Status, r.Body)
	}
}

func TestMain(m *testing.M) {
	// bcrypt at its real cost is very slow under the race detector.
	passwords.BcryptCost = bcrypt.MinCost
	os.Exit(dbtest.Main(m))
}

var scriptTagRE = regexp.MustCompile(`<script\b[^>]*>`)

// hasInlineScript reports whether a page carries script other than the embedded
// static files (the CSP forbids inline script; pages must work without script).
func hasInlineScript(body string) bool {
	for _, tag := range scriptTagRE.FindAllString(body, -1) {
		if !strings.Contains(tag, ` src="/static/`) {
			return true
		}
	}
	return false
}
