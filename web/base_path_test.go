package web_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/stacks-ils/stacks/basepath"
	"github.com/stacks-ils/stacks/basepath/basepathtest"
)

// TestBasePath serves the staff site under a base path (as stacks serve
// --base-path does, and a CGI or FastCGI mount) and at the root, signs in as
// an administrator, and renders every GET route of the router. On every page
// each URL the HTML emits (href, src, action, formaction, hx-*, data-*-url)
// must be a fragment, an external URL, or a path under the base that the
// router answers for its method; every Location is under the base, every
// Set-Cookie has the path base + "/", and Server-Timing is sent. Then every
// local link found is followed: none may be 404 or lead outside the base.
func TestBasePath(t *testing.T) {
	e := newDemoEnv(t)
	ids := routeIDs(t, e)
	rs := routes(t, e)
	router := e.Web.Router()
	for _, base := range []string{"", "/lib/x"} {
		t.Run("Base="+base, func(t *testing.T) {
			ts := httptest.NewServer(basepath.Mount(base, e.Web))
			t.Cleanup(ts.Close)
			host := strings.TrimPrefix(ts.URL, "http://")
			site := &testEnv{DB: e.DB, Clock: e.Clock, Srv: ts, Web: e.Web}
			c := site.client(t)

			// A page that needs a sign-in sends the browser to the login page
			// under the base, remembering the routed path.
			r := site.get(t, c, base+"/patrons?q=x")
			if r.Status != http.StatusSeeOther || r.Location != base+"/login?next=%2Fpatrons%3Fq%3Dx" {
				t.Fatalf("anonymous GET %s/patrons?q=x: %d to %q, want 303 to %s/login?next=...", base, r.Status, r.Location, base)
			}
			// The login form posts under the base; the sign-in goes to the page
			// asked for, under the base, and the cookie's path is the base's.
			r = site.get(t, c, base+"/login?next=%2Fpatrons%3Fq%3Dx")
			basepathtest.Emitted(t, "GET /login", r.Header, r.Location, r.Body, base, host, router)
			if !strings.Contains(r.Body, `action="`+base+`/login"`) {
				t.Errorf("the login form does not post to %s/login", base)
			}
			r = site.post(t, c, base+"/login", url.Values{"username": {"admin"}, "password": {"admin"}, "next": {"/patrons?q=x"}})
			if r.Status != http.StatusSeeOther || r.Location != base+"/patrons?q=x" {
				t.Fatalf("POST %s/login: %d to %q, want 303 to %s/patrons?q=x", base, r.Status, r.Location, base)
			}
			if sc := r.Header.Values("Set-Cookie"); len(sc) == 0 {
				t.Fatalf("POST %s/login: no session cookie", base)
			}
			basepathtest.CheckCookies(t, "POST /login", r.Header, base)
			// A "next" that climbs out of the base is refused.
			for _, next := range []string{"/../admin", "/%2e%2e/admin", "/a/./b"} {
				r := site.post(t, c, base+"/login", url.Values{"username": {"admin"}, "password": {"admin"}, "next": {next}})
				if r.Location != base+"/" {
					t.Errorf("login with next=%q: to %q, want %s/", next, r.Location, base)
				}
			}

			var pages []basepathtest.Route
			for _, rt := range rs {
				// /metrics is 404 with metrics off, as here (metrics_test.go).
				if rt.Method == http.MethodGet && rt.Pattern != "/metrics" {
					pages = append(pages, basepathtest.Route{Pattern: rt.Pattern, Path: pathOf(rt.Pattern, ids, "")})
				}
			}
			basepathtest.Pages(t, pages, 40, 60, base, host, router, func(p string) (basepathtest.Answer, string) {
				r := site.get(t, c, p)
				return basepathtest.Answer{Status: r.Status, Header: r.Header, Location: r.Location}, r.Body
			})
			// Outside the base: 404; the base without its slash: to base + "/".
			if base != "" {
				if r := site.get(t, c, "/checkout"); r.Status != http.StatusNotFound {
					t.Errorf("GET /checkout outside the base %s: %d, want 404", base, r.Status)
				}
				if r := site.get(t, c, base+"x/checkout"); r.Status != http.StatusNotFound {
					t.Errorf("GET %sx/checkout: %d, want 404", base, r.Status)
				}
				if r := site.get(t, c, base+"?a=1"); r.Status != http.StatusMovedPermanently || r.Location != base+"/?a=1" {
					t.Errorf("GET %s?a=1: %d to %q, want 301 to %s/?a=1", base, r.Status, r.Location, base)
				}
			}
			// Signing out clears the cookie under the base.
			r = site.post(t, c, base+"/logout", url.Values{})
			if r.Status != http.StatusSeeOther || r.Location != base+"/login" {
				t.Errorf("POST %s/logout: %d to %q, want 303 to %s/login", base, r.Status, r.Location, base)
			}
			basepathtest.CheckCookies(t, "POST /logout", r.Header, base)
		})
	}
}
