// Package basepathtest finds the URLs a page emits, for the tests that prove a
// site served under a base path links, posts and loads only under it.
package basepathtest

import (
	"maps"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"
	"golang.org/x/net/html"
)

// Found is one URL in a page: the element, the attribute, its value, and the
// method a browser (or the desk's script) uses to follow it.
type Found struct {
	Tag, Attr, Value string
	// Method is "GET" for links, assets and GET forms, "POST" for POST forms,
	// buttons' formaction in them, hx-post and the desk's data-scan-url.
	Method string
}

func (f Found) String() string { return "<" + f.Tag + " " + f.Attr + "=" + f.Value + ">" }

// urlAttrs are the attributes that hold a URL.
var urlAttrs = map[string]bool{
	"href": true, "src": true, "action": true, "formaction": true, "poster": true,
	"hx-get": true, "hx-post": true, "hx-put": true, "hx-delete": true, "hx-patch": true,
	"hx-push-url": true, "hx-replace-url": true,
}

// URLs returns every URL attribute of the HTML page body: the attributes of
// urlAttrs, any data-*-url, and a meta refresh's URL.
func URLs(body string) ([]Found, error) {
	doc, err := html.Parse(strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	var out []Found
	var walk func(n *html.Node, formMethod string)
	walk = func(n *html.Node, formMethod string) {
		if n.Type == html.ElementNode {
			if n.Data == "form" {
				formMethod = "GET"
				if strings.EqualFold(attr(n, "method"), "post") {
					formMethod = "POST"
				}
			}
			for _, a := range n.Attr {
				name := strings.ToLower(a.Key)
				if !urlAttrs[name] && !(strings.HasPrefix(name, "data-") && strings.HasSuffix(name, "-url")) {
					if n.Data == "meta" && name == "content" && strings.EqualFold(attr(n, "http-equiv"), "refresh") {
						if _, u, ok := strings.Cut(a.Val, "url="); ok {
							out = append(out, Found{n.Data, "meta refresh", u, "GET"})
						}
					}
					continue
				}
				m := "GET"
				switch {
				case name == "action" || name == "formaction":
					m = formMethod
					if name == "action" && strings.EqualFold(attr(n, "method"), "post") {
						m = "POST"
					}
				case name == "hx-post" || name == "data-scan-url" || name == "data-done-url":
					m = "POST"
				case name == "hx-put" || name == "hx-delete" || name == "hx-patch":
					m = strings.ToUpper(strings.TrimPrefix(name, "hx-"))
				}
				out = append(out, Found{n.Data, name, a.Val, m})
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, formMethod)
		}
	}
	walk(doc, "GET")
	return out, nil
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if strings.EqualFold(a.Key, key) {
			return a.Val
		}
	}
	return ""
}

// External reports whether v leaves the site, or stays on the page: a fragment,
// a mailto:, tel: or data: URL, or an absolute URL of another host than host.
func External(v, host string) bool {
	if strings.HasPrefix(v, "#") {
		return true
	}
	u, err := url.Parse(v)
	if err != nil {
		return false
	}
	switch strings.ToLower(u.Scheme) {
	case "mailto", "tel", "data":
		return true
	case "http", "https":
		return u.Host != host
	}
	return false
}

// Under returns the routed path of the site URL v ("/lib/x/checkout?y=1" under
// "/lib/x" is "/checkout", query dropped), or ok false if v is not a path
// under base: relative, "//host", outside the base, or with a "." or ".."
// segment. An absolute URL of host is read for its path.
func Under(v, base, host string) (routed string, ok bool) {
	u, err := url.Parse(v)
	if err != nil || u.Opaque != "" {
		return "", false
	}
	if u.Scheme != "" || u.Host != "" {
		if (u.Scheme != "http" && u.Scheme != "https") || u.Host != host {
			return "", false
		}
	}
	if strings.HasPrefix(v, "//") || !strings.HasPrefix(u.Path, "/") {
		return "", false
	}
	for _, seg := range strings.Split(u.Path, "/") {
		if seg == "." || seg == ".." {
			return "", false
		}
	}
	if base == "" {
		return u.Path, true
	}
	rest, found := strings.CutPrefix(u.Path, base)
	if !found || !strings.HasPrefix(rest, "/") {
		return "", false
	}
	return rest, true
}

// Emitted checks an answer of a site mounted at base (its header, the Location
// in it, its body): the Location, every cookie's Path and every URL in the HTML
// are under base, and every local URL names a route of router. It returns the
// local URLs a browser would GET from the page, as paths with their queries, for
// the caller to follow. what names the answer in failures.
func Emitted(t testing.TB, what string, h http.Header, location, body, base, host string, router chi.Routes) map[string]bool {
	t.Helper()
	CheckLocation(t, what, location, base, host)
	CheckCookies(t, what, h, base)
	links := map[string]bool{}
	if !strings.HasPrefix(h.Get("Content-Type"), "text/html") {
		return links
	}
	found, err := URLs(body)
	if err != nil {
		t.Errorf("%s: the HTML does not parse: %v", what, err)
		return links
	}
	for _, f := range found {
		if External(f.Value, host) {
			continue
		}
		routed, ok := Under(f.Value, base, host)
		if !ok {
			t.Errorf("%s: %s is not under the base %q", what, f, base)
			continue
		}
		if !router.Match(chi.NewRouteContext(), f.Method, routed) {
			t.Errorf("%s: %s: no %s route for %s", what, f, f.Method, routed)
			continue
		}
		if f.Method == http.MethodGet {
			u, _ := url.Parse(f.Value)
			l := u.Path
			if u.RawQuery != "" {
				l += "?" + u.RawQuery
			}
			links[l] = true
		}
	}
	return links
}

// CheckLocation fails t if a redirect's location is not under base.
func CheckLocation(t testing.TB, what, location, base, host string) {
	t.Helper()
	if location == "" {
		return
	}
	if _, ok := Under(location, base, host); !ok {
		t.Errorf("%s: Location %q is not under the base %q", what, location, base)
	}
}

// CheckCookies fails t if a cookie the header sets has a Path other than the
// base and a slash.
func CheckCookies(t testing.TB, what string, h http.Header, base string) {
	t.Helper()
	for _, c := range (&http.Response{Header: h}).Cookies() {
		if c.Path != base+"/" {
			t.Errorf("%s: cookie %s has Path %q, want %q", what, c.Name, c.Path, base+"/")
		}
	}
}

// Route is a page of a site to check: its route pattern and a routed path
// that fills it.
type Route struct {
	Pattern, Path string
}

// Pages checks the pages of a site mounted at base, getting each through get
// (a signed-in client's GET of a full path, with the answer's body): every
// page is a page or a redirect, with a Server-Timing header (but for the
// assets), and passes Emitted; at least minPages of them; then every local
// link they emit is followed (FollowLinks, at least minLinks).
func Pages(t testing.TB, pages []Route, minPages, minLinks int, base, host string, router chi.Routes, get func(path string) (Answer, string)) {
	t.Helper()
	links := map[string]bool{}
	n := 0
	for _, p := range pages {
		what := "GET " + base + p.Path
		a, body := get(base + p.Path)
		if a.Status != http.StatusOK && a.Status != http.StatusSeeOther {
			t.Errorf("%s: %d, want the page", what, a.Status)
			continue
		}
		if a.Header.Get("Server-Timing") == "" && p.Pattern != "/static/*" && p.Pattern != "/favicon.ico" {
			t.Errorf("%s: no Server-Timing header", what)
		}
		maps.Copy(links, Emitted(t, what, a.Header, a.Location, body, base, host, router))
		n++
	}
	if n < minPages {
		t.Fatalf("rendered only %d pages", n)
	}
	t.Logf("%d pages", n)
	FollowLinks(t, links, minLinks, base, host, func(l string) Answer {
		a, _ := get(l)
		return a
	})
}

// Answer is what a test's client got for a GET: its status, header and Location.
type Answer struct {
	Status   int
	Header   http.Header
	Location string
}

// FollowLinks asks get for each of the local links a site's pages emitted
// (sorted, for a stable order; at least min of them, or the pages were not
// what the test thinks) and fails t for a link that is not found or errs, or
// whose answer redirects or sets a cookie outside base.
func FollowLinks(t testing.TB, links map[string]bool, min int, base, host string, get func(path string) Answer) {
	t.Helper()
	var all []string
	for l := range links {
		all = append(all, l)
	}
	sort.Strings(all)
	if len(all) < min {
		t.Fatalf("only %d distinct local links found on the pages, want at least %d: %v", len(all), min, all)
	}
	t.Logf("%d distinct local links", len(all))
	for _, l := range all {
		r := get(l)
		if r.Status == http.StatusNotFound || r.Status >= 500 {
			t.Errorf("link %s: %d", l, r.Status)
		}
		CheckLocation(t, "link "+l, r.Location, base, host)
		CheckCookies(t, "link "+l, r.Header, base)
	}
}
