package basepath_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stacks-ils/stacks/basepath"
)

func TestClean(t *testing.T) {
	for _, tc := range []struct{ in, want, err string }{
		{"", "", ""},
		{"/", "", ""},
		{"/library", "/library", ""},
		{"/library/", "/library", ""},
		{"/cgi-bin/stacks", "/cgi-bin/stacks", ""},
		{"/a.b/c~d_e", "/a.b/c~d_e", ""},
		{"library", "", "must start with"},
		{"/a//b", "", "empty segment"},
		{"/a/../b", "", `".."`},
		{"/a/./b", "", `"."`},
		{"/..", "", `".."`},
		{"/a b", "", "no spaces"},
		{"/a?x=1", "", "no spaces"},
		{"/a#x", "", "no spaces"},
		{"/a%2e", "", "no spaces"},
		{"/a\\b", "", "no spaces"},
		{"/a\tb", "", "no spaces"},
		{`/a"b`, "", "no spaces"},
		{"//evil.example", "", "empty segment"},
	} {
		got, err := basepath.Clean(tc.in)
		switch {
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("Clean(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("Clean(%q) = %q, %v; want an error saying %q", tc.in, got, err, tc.err)
		}
	}
}

func TestURL(t *testing.T) {
	ctx := basepath.With(context.Background(), "/lib")
	for _, tc := range []struct{ in, want string }{
		{"/", "/lib/"},
		{"/checkout?x=1", "/lib/checkout?x=1"},
		{"#main", "#main"},
		{"mailto:a@example.org", "mailto:a@example.org"},
		{"https://example.org/x", "https://example.org/x"},
		{"//example.org/x", "//example.org/x"},
		{"/\\example.org", "/\\example.org"},
		{"relative", "relative"},
		{"", ""},
	} {
		if got := basepath.URL(ctx, tc.in); got != tc.want {
			t.Errorf("URL(/lib, %q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := basepath.URL(context.Background(), "/checkout"); got != "/checkout" {
		t.Errorf("URL at the root = %q, want /checkout", got)
	}
	p := "/checkout"
	if n := testing.AllocsPerRun(100, func() { _ = basepath.URL(context.Background(), p) }); n != 0 {
		t.Errorf("URL at the root allocates %v times, want 0", n)
	}
}

func TestMount(t *testing.T) {
	h := basepath.Mount("/lib", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(basepath.From(r.Context()) + " " + r.URL.Path + " " + r.URL.RawPath + " " + r.URL.RawQuery))
	}))
	for _, tc := range []struct {
		target string
		status int
		body   string
		loc    string
	}{
		{"/lib/", 200, "/lib /  ", ""},
		{"/lib/checkout?x=1", 200, "/lib /checkout  x=1", ""},
		{"/lib/a%2Fb", 200, "/lib /a/b /a%2Fb ", ""},
		{"/lib", 301, "", "/lib/"},
		{"/lib?x=1", 301, "", "/lib/?x=1"},
		{"/libx/checkout", 404, "", ""},
		{"/checkout", 404, "", ""},
		{"/", 404, "", ""},
	} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", tc.target, nil))
		if w.Code != tc.status || (tc.body != "" && w.Body.String() != tc.body) || w.Header().Get("Location") != tc.loc {
			t.Errorf("GET %s: %d %q to %q, want %d %q to %q", tc.target, w.Code, w.Body.String(), w.Header().Get("Location"), tc.status, tc.body, tc.loc)
		}
	}
}

func TestCGI(t *testing.T) {
	echo := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(basepath.From(r.Context()) + " " + r.URL.Path + " " + r.URL.RawQuery))
	})
	for _, tc := range []struct {
		base, pathInfo, target string
		status                 int
		body, loc              string
	}{
		{"/cgi-bin/stacks", "/checkout", "/cgi-bin/stacks/checkout?x=1", 200, "/cgi-bin/stacks /checkout x=1", ""},
		// A rewrite: the request came for /library/checkout.
		{"/library", "/checkout", "/library/checkout", 200, "/library /checkout ", ""},
		{"/cgi-bin/stacks", "", "/cgi-bin/stacks", 301, "", "/cgi-bin/stacks/"},
		{"", "/login", "/login", 200, " /login ", ""},
		{"", "", "/login", 200, " /login ", ""},
	} {
		w := httptest.NewRecorder()
		basepath.CGI(tc.base, tc.pathInfo, echo).ServeHTTP(w, httptest.NewRequest("GET", tc.target, nil))
		if w.Code != tc.status || (tc.body != "" && w.Body.String() != tc.body) || w.Header().Get("Location") != tc.loc {
			t.Errorf("SCRIPT_NAME %q PATH_INFO %q: %d %q to %q, want %d %q to %q", tc.base, tc.pathInfo, w.Code, w.Body.String(), w.Header().Get("Location"), tc.status, tc.body, tc.loc)
		}
	}
}
