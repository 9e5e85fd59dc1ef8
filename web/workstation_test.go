package web_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/stacks-ils/stacks/web"
)

// workstationOf reads the workstation settings a page was drawn with: the body's
// data-sounds and whether the receipt stylesheet is linked.
func workstationOf(t *testing.T, body string) (sounds string, receipt bool) {
	t.Helper()
	switch {
	case strings.Contains(body, `<body data-sounds="on"`):
		sounds = "on"
	case strings.Contains(body, `<body data-sounds="off"`):
		sounds = "off"
	default:
		t.Fatalf("no data-sounds on the body:\n%.600s", body)
	}
	if !strings.Contains(body, `/static/print.css?v=`) {
		t.Error("the page does not link print.css")
	}
	return sounds, strings.Contains(body, `/static/receipt.css?v=`)
}

// scanGapOf reads the scanner key gap a page was drawn with (body data-scan-gap).
func scanGapOf(t *testing.T, body string) string {
	t.Helper()
	m := regexp.MustCompile(`<body [^>]*data-scan-gap="([^"]*)"`).FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no data-scan-gap on the body:\n%.600s", body)
	}
	return m[1]
}

// setCookie gives the client a workstation cookie with the raw value, as a browser
// would send it back.
func setWorkstationCookie(t *testing.T, e *testEnv, c *http.Client, value string) {
	t.Helper()
	u, _ := url.Parse(e.Srv.URL)
	c.Jar.SetCookies(u, []*http.Cookie{{Name: "stacks_workstation", Value: value, Path: "/"}})
}

// TestWorkstation: the settings are saved in this browser's cookie and every page
// follows them; the defaults (sounds on, slips on a page) hold until then.
func TestWorkstation(t *testing.T) {
	e := newDemoEnv(t)

	t.Run("Defaults", func(t *testing.T) {
		c := e.deskClient(t)
		r := e.get(t, c, "/workstation")
		if r.Status != http.StatusOK {
			t.Fatalf("GET /workstation: %d", r.Status)
		}
		mustContain(t, "the workstation page", r.Body, "<h1>Workstation</h1>", `<legend>Sounds</legend>`, `<legend>Slip paper</legend>`,
			`value="on" checked`, `value="page" checked`, "A4 or Letter page", "80 mm receipt printer")
		if s, receipt := workstationOf(t, r.Body); s != "on" || receipt {
			t.Errorf("defaults: sounds %s, receipt paper %v; want on, false", s, receipt)
		}
	})

	t.Run("ReachedFromHeaderAndAccount", func(t *testing.T) {
		c := e.deskClient(t)
		mustContain(t, "the start page's header", e.get(t, c, "/").Body, `<a class="workstation" href="/workstation">Workstation</a>`)
		mustContain(t, "My account", e.get(t, c, "/account").Body, `<a href="/workstation">Workstation settings</a>`)
	})

	t.Run("RoundTrip", func(t *testing.T) {
		c := e.deskClient(t)
		r := e.post(t, c, "/workstation", url.Values{"sounds": {"off"}, "paper": {"receipt"}})
		if r.Status != http.StatusSeeOther || r.Location != "/workstation" {
			t.Fatalf("save: %d to %q, want 303 to /workstation", r.Status, r.Location)
		}
		sc := r.Header.Get("Set-Cookie")
		for _, want := range []string{"stacks_workstation=", "Path=/", "Max-Age=34560000", "HttpOnly", "SameSite=Lax"} {
			if !strings.Contains(sc, want) {
				t.Errorf("Set-Cookie %q lacks %s", sc, want)
			}
		}
		if strings.Contains(sc, "Secure") {
			t.Errorf("Set-Cookie %q is Secure without the secure-cookies option", sc)
		}
		r = e.get(t, c, "/workstation")
		mustContain(t, "the page after saving", r.Body, "Workstation settings saved", `value="off" checked`, `value="receipt" checked`)
		for _, path := range []string{"/workstation", "/", "/checkin", "/holds"} {
			if s, receipt := workstationOf(t, e.get(t, c, path).Body); s != "off" || !receipt {
				t.Errorf("%s: sounds %s, receipt paper %v; want off, true", path, s, receipt)
			}
		}
		// Per desk, not per account: another sign-in on this browser keeps them,
		// and the sign-in renews the cookie; another browser has the defaults.
		r = e.login(t, c, "admin", "admin")
		if sc := r.Header.Values("Set-Cookie"); !strings.Contains(strings.Join(sc, "\n"), "stacks_workstation=") {
			t.Errorf("sign-in did not renew the workstation cookie: %q", sc)
		}
		if s, receipt := workstationOf(t, e.get(t, c, "/").Body); s != "off" || !receipt {
			t.Errorf("after signing in as another user: sounds %s, receipt paper %v; want off, true", s, receipt)
		}
		if s, receipt := workstationOf(t, e.get(t, e.deskClient(t), "/").Body); s != "on" || receipt {
			t.Errorf("another browser: sounds %s, receipt paper %v; want the defaults", s, receipt)
		}
		// And back.
		e.post(t, c, "/workstation", url.Values{"sounds": {"on"}, "paper": {"page"}})
		if s, receipt := workstationOf(t, e.get(t, c, "/").Body); s != "on" || receipt {
			t.Errorf("saved back: sounds %s, receipt paper %v; want on, false", s, receipt)
		}
	})

	t.Run("InvalidForm", func(t *testing.T) {
		for _, tc := range []struct {
			field string
			form  url.Values
		}{
			{"sounds", url.Values{"sounds": {"loud"}, "paper": {"receipt"}}},
			{"sounds", url.Values{"paper": {"receipt"}}},
			{"paper", url.Values{"sounds": {"off"}, "paper": {"A3"}}},
			{"paper", url.Values{"sounds": {"off"}}},
		} {
			c := e.deskClient(t)
			r := e.post(t, c, "/workstation", tc.form)
			if r.Status != http.StatusUnprocessableEntity || fieldError(r.Body, tc.field) == "" {
				t.Errorf("%v: %d, want 422 with a message beside %s", tc.form, r.Status, tc.field)
			}
			if sc := r.Header.Get("Set-Cookie"); strings.Contains(sc, "stacks_workstation") {
				t.Errorf("%v: refused, yet set %q", tc.form, sc)
			}
		}
	})

	// The scanner key gap: kept in the cookie, drawn on every page's body for the
	// desk script, refused with a message beside the field when it is not a
	// whole number of milliseconds in range; empty is the default.
	t.Run("ScanGap", func(t *testing.T) {
		c := e.deskClient(t)
		if got := scanGapOf(t, e.get(t, c, "/checkout").Body); got != "50" {
			t.Errorf("default scanner key gap %s, want 50", got)
		}
		mustContain(t, "the workstation page", e.get(t, c, "/workstation").Body,
			`<legend>Barcode scanner</legend>`, `<label for="scangap">Scanner key gap (milliseconds)</label>`, `name="scangap" value="50"`)
		for _, tc := range []struct{ typed, want string }{{"120", "120"}, {" 35 ms", "35"}, {"500", "500"}, {"10", "10"}, {"", "50"}} {
			r := e.post(t, c, "/workstation", url.Values{"sounds": {"on"}, "paper": {"page"}, "scangap": {tc.typed}})
			if r.Status != http.StatusSeeOther {
				t.Fatalf("saving scanner key gap %q: %d", tc.typed, r.Status)
			}
			for _, path := range []string{"/checkout", "/checkin", "/workstation"} {
				if got := scanGapOf(t, e.get(t, c, path).Body); got != tc.want {
					t.Errorf("after saving %q, %s has scanner key gap %s, want %s", tc.typed, path, got, tc.want)
				}
			}
		}
		for _, typed := range []string{"fast", "9", "501", "12.5", "-50", "50ms50"} {
			r := e.post(t, c, "/workstation", url.Values{"sounds": {"on"}, "paper": {"page"}, "scangap": {typed}})
			msg := fieldError(r.Body, "scangap")
			if r.Status != http.StatusUnprocessableEntity || !strings.Contains(msg, "whole number of milliseconds from 10 to 500") {
				t.Errorf("scanner key gap %q: %d %q, want 422 with a message beside the field", typed, r.Status, msg)
			}
			mustContain(t, "the refused form", r.Body, `aria-invalid="true"`, `aria-describedby="scangap-error"`)
			if sc := r.Header.Get("Set-Cookie"); strings.Contains(sc, "stacks_workstation") {
				t.Errorf("scanner key gap %q: refused, yet set %q", typed, sc)
			}
		}
		for _, tc := range []struct{ cookie, want string }{
			{"scangap=80", "80"}, {"scangap=5", "50"}, {"scangap=x", "50"}, {"sounds=off", "50"}, {"scangap=80&scangap=90", "80"},
		} {
			c := e.deskClient(t)
			setWorkstationCookie(t, e, c, tc.cookie)
			if got := scanGapOf(t, e.get(t, c, "/checkin").Body); got != tc.want {
				t.Errorf("cookie %q: scanner key gap %s, want %s", tc.cookie, got, tc.want)
			}
		}
	})

	t.Run("InvalidCookie", func(t *testing.T) {
		for _, tc := range []struct {
			value   string
			sounds  string
			receipt bool
		}{
			{"", "on", false},
			{"garbage", "on", false},
			{"sounds=loud&paper=A3", "on", false},
			{"sounds=OFF&paper=RECEIPT", "on", false},
			{"sounds=off", "off", false},
			{"paper=receipt", "on", true},
			{"paper=receipt&sounds=%ff%00", "on", true},
			{"sounds=off&sounds=on&paper=receipt", "off", true},
			{"%%%;sounds=off", "on", false},
			{strings.Repeat("x", 3000), "on", false},
		} {
			c := e.deskClient(t)
			setWorkstationCookie(t, e, c, tc.value)
			r := e.get(t, c, "/workstation")
			if r.Status != http.StatusOK {
				t.Errorf("cookie %.40q: %d", tc.value, r.Status)
				continue
			}
			if s, receipt := workstationOf(t, r.Body); s != tc.sounds || receipt != tc.receipt {
				t.Errorf("cookie %.40q: sounds %s, receipt paper %v; want %s, %v", tc.value, s, receipt, tc.sounds, tc.receipt)
			}
		}
	})
}

// TestWorkstationSecureCookie: with SecureCookies the workstation cookie, like the
// session's, is marked Secure.
func TestWorkstationSecureCookie(t *testing.T) {
	for _, secure := range []bool{false, true} {
		t.Run(fmt.Sprint("Secure=", secure), func(t *testing.T) {
			e := newEnv(t)
			ts := httptest.NewServer(web.New(web.Config{DB: e.DB, SecureCookies: secure}))
			t.Cleanup(ts.Close)
			e.Srv = ts
			// The jar would not send a Secure session cookie back over plain HTTP:
			// take it from the sign-in's answer and send it by hand.
			r := e.login(t, e.client(t), "desk", "desk")
			var session string
			for _, ck := range (&http.Response{Header: r.Header}).Cookies() {
				if ck.Name == "stacks_session" {
					session = ck.Name + "=" + ck.Value
				}
			}
			if r.Status != http.StatusSeeOther || session == "" {
				t.Fatalf("login: %d, session cookie %q", r.Status, session)
			}
			form := url.Values{"sounds": {"on"}, "paper": {"receipt"}}
			req, _ := http.NewRequest(http.MethodPost, ts.URL+"/workstation", strings.NewReader(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Cookie", session)
			r = do(t, &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}, req)
			if r.Status != http.StatusSeeOther {
				t.Fatalf("save: %d", r.Status)
			}
			sc := r.Header.Get("Set-Cookie")
			if !strings.Contains(sc, "stacks_workstation=") {
				t.Fatalf("no workstation cookie: %q", sc)
			}
			if got := strings.Contains(sc, "; Secure"); got != secure {
				t.Errorf("Set-Cookie %q: Secure is %v, want %v", sc, got, secure)
			}
		})
	}
}
