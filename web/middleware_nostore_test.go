package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestCacheControl: every page and desk fragment, which show patrons' data, is
// "no-store"; the static assets keep their long cache; /static/ lists nothing.
// (TestRoutesAccessControl checks no-store on every route besides.)
func TestCacheControl(t *testing.T) {
	e := newDemoEnv(t)
	desk := e.deskClient(t)
	anon := e.client(t)
	patron := e.patronPath(t, "P0001")
	for _, tc := range []struct {
		name   string
		c      *http.Client
		do     func(c *http.Client) response
		status int
		cache  string
	}{
		{"PatronPage", desk, func(c *http.Client) response { return e.get(t, c, patron) }, http.StatusOK, "no-store"},
		{"PatronSearch", desk, func(c *http.Client) response { return e.get(t, c, "/patrons?q=P0001") }, 0, "no-store"},
		{"Home", desk, func(c *http.Client) response { return e.get(t, c, "/") }, http.StatusOK, "no-store"},
		{"DeskFragment", desk, func(c *http.Client) response {
			return e.scan(t, c, "/checkout/scan", url.Values{"scan": {"P0001"}})
		}, http.StatusOK, "no-store"},
		{"DeskFragmentRefused", desk, func(c *http.Client) response {
			return e.scan(t, c, "/checkin/scan", url.Values{"scan": {"NO-SUCH-ITEM"}})
		}, 0, "no-store"},
		{"Redirect", desk, func(c *http.Client) response {
			return e.post(t, c, "/workstation", url.Values{"branch": {"CEN"}})
		}, 0, "no-store"},
		{"NotFound", desk, func(c *http.Client) response { return e.get(t, c, "/no-such-page") }, http.StatusNotFound, "no-store"},
		{"LoginPage", anon, func(c *http.Client) response { return e.get(t, c, "/login") }, http.StatusOK, "no-store"},
		{"SentToLogin", anon, func(c *http.Client) response { return e.get(t, c, patron) }, http.StatusSeeOther, "no-store"},
		{"Healthz", anon, func(c *http.Client) response { return e.get(t, c, "/healthz") }, http.StatusOK, "no-store"},
		{"Stylesheet", anon, func(c *http.Client) response { return e.get(t, c, "/static/stacks.css") }, http.StatusOK, "public, max-age=31536000, immutable"},
		{"Script", anon, func(c *http.Client) response { return e.get(t, c, "/static/stacks.js?v=1") }, http.StatusOK, "public, max-age=31536000, immutable"},
		{"Favicon", anon, func(c *http.Client) response { return e.get(t, c, "/favicon.ico") }, http.StatusOK, "public, max-age=86400"},
		{"StaticDirectory", anon, func(c *http.Client) response { return e.get(t, c, "/static/") }, http.StatusNotFound, "no-store"},
		{"StaticDirectoryDot", anon, func(c *http.Client) response { return e.get(t, c, "/static/./") }, http.StatusNotFound, "no-store"},
		{"StaticMissing", anon, func(c *http.Client) response { return e.get(t, c, "/static/missing.css") }, http.StatusNotFound, "no-store"},
		{"StaticTrailingSlash", anon, func(c *http.Client) response { return e.get(t, c, "/static/stacks.css/") }, http.StatusNotFound, "no-store"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.do(tc.c)
			if tc.status != 0 && r.Status != tc.status {
				t.Errorf("status %d, want %d\n%.300s", r.Status, tc.status, r.Body)
			}
			if got := r.Header.Get("Cache-Control"); got != tc.cache {
				t.Errorf("Cache-Control %q, want %q", got, tc.cache)
			}
			for _, file := range []string{"stacks.css", "htmx-", "favicon.ico"} {
				if strings.HasPrefix(tc.name, "Static") && strings.Contains(r.Body, file) {
					t.Errorf("the answer lists the directory (%s):\n%.300s", file, r.Body)
				}
			}
		})
	}
}
