package main

import (
	"context"
	"io"
	"net/http"
	"net/http/cgi"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/stacks-ils/stacks/basepath/basepathtest"
)

// TestCGIChild is not a test: run as a CGI program by TestCGIBasePath (this
// test binary, as Apache would run stacks), it serves the one request with
// stacks cgi and exits.
func TestCGIChild(t *testing.T) {
	if os.Getenv("STACKS_TEST_CGI_CHILD") != "1" {
		t.Skip("run by TestCGIBasePath as a CGI program")
	}
	err := run(context.Background(), []string{"cgi"}, os.Stdout, os.Stderr)
	if err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		os.Exit(1)
	}
	os.Exit(0)
}

// TestCGIBasePath: stacks cgi run by a CGI host (net/http/cgi, as Apache's
// ScriptAlias /cgi-bin/stacks would) at /cgi-bin/stacks: a page that needs a
// sign-in redirects to the login page under SCRIPT_NAME, the login form posts
// there, the assets load from there, the sign-in's cookie has the path
// /cgi-bin/stacks/ and opens the desk (with Server-Timing), and SCRIPT_NAME
// without a slash goes to SCRIPT_NAME + "/". With STACKS_BASE_PATH (a rewrite
// that publishes the script at /library), the links follow it instead.
func TestCGIBasePath(t *testing.T) {
	path := newDemoDB(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	host := func(root string, env ...string) *httptest.Server {
		h := &cgi.Handler{
			Path: exe,
			Root: root,
			Args: []string{"-test.run=^TestCGIChild$"},
			Env:  append([]string{"STACKS_TEST_CGI_CHILD=1", "STACKS_DB=" + path, "STACKS_LOG_LEVEL=warn"}, env...),
		}
		mux := http.NewServeMux()
		mux.Handle(root+"/", h)
		mux.Handle(root, h)
		ts := httptest.NewServer(mux)
		t.Cleanup(ts.Close)
		return ts
	}

	t.Run("ScriptName", func(t *testing.T) {
		const base = "/cgi-bin/stacks"
		ts := host(base)
		c := browser(t)
		r := get(t, c, ts.URL+base+"/checkout")
		if r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != base+"/login?next=%2Fcheckout" {
			t.Fatalf("GET %s/checkout signed out: %d to %q, want 303 to %s/login?next=%%2Fcheckout", base, r.StatusCode, r.Header.Get("Location"), base)
		}
		r = get(t, c, ts.URL+base+"/login")
		body := readBody(t, r)
		if r.StatusCode != http.StatusOK || !strings.Contains(body, `action="`+base+`/login"`) {
			t.Fatalf("GET %s/login: %d; the form must post to %s/login\n%s", base, r.StatusCode, base, body)
		}
		found, err := basepathtest.URLs(body)
		if err != nil {
			t.Fatal(err)
		}
		css := ""
		for _, f := range found {
			if f.Tag == "link" && strings.Contains(f.Value, "/static/stacks.css") {
				css = f.Value
			}
			if _, ok := basepathtest.Under(f.Value, base, ""); !ok && !basepathtest.External(f.Value, "") {
				t.Errorf("the login page's %s is not under %s", f, base)
			}
		}
		if !strings.HasPrefix(css, base+"/static/stacks.css?v=") {
			t.Fatalf("the login page's stylesheet %q is not under %s/static/", css, base)
		}
		if r := get(t, c, ts.URL+css); r.StatusCode != http.StatusOK || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/css") {
			t.Errorf("GET %s: %d %s, want the stylesheet", css, r.StatusCode, r.Header.Get("Content-Type"))
		}

		r, err = c.PostForm(ts.URL+base+"/login", url.Values{"username": {"desk"}, "password": {"desk"}, "next": {"/checkout"}})
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
		if r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != base+"/checkout" {
			t.Fatalf("POST %s/login: %d to %q, want 303 to %s/checkout", base, r.StatusCode, r.Header.Get("Location"), base)
		}
		cookies := r.Cookies()
		if len(cookies) == 0 {
			t.Fatal("POST /login set no cookie")
		}
		for _, ck := range cookies {
			if ck.Path != base+"/" {
				t.Errorf("cookie %s: Path %q, want %s/", ck.Name, ck.Path, base)
			}
		}
		r = get(t, c, ts.URL+base+"/checkout")
		body = readBody(t, r)
		if r.StatusCode != http.StatusOK || !strings.Contains(body, "Card number") {
			t.Fatalf("GET %s/checkout signed in: %d, want the desk\n%s", base, r.StatusCode, body)
		}
		if r.Header.Get("Server-Timing") == "" {
			t.Errorf("GET %s/checkout: no Server-Timing", base)
		}
		if !strings.Contains(body, `data-scan-url="`+base+`/checkout/scan"`) {
			t.Errorf("the desk's scan URL is not under %s", base)
		}
		if r := get(t, c, ts.URL+base); r.StatusCode != http.StatusMovedPermanently || r.Header.Get("Location") != base+"/" {
			t.Errorf("GET %s: %d to %q, want 301 to %s/", base, r.StatusCode, r.Header.Get("Location"), base)
		}
	})

	t.Run("Override", func(t *testing.T) {
		ts := host("/cgi-bin/stacks", "STACKS_BASE_PATH=/library")
		r := get(t, browser(t), ts.URL+"/cgi-bin/stacks/checkout")
		if r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/library/login?next=%2Fcheckout" {
			t.Errorf("with STACKS_BASE_PATH=/library: %d to %q, want 303 to /library/login?next=%%2Fcheckout", r.StatusCode, r.Header.Get("Location"))
		}
	})

	t.Run("ErrBadBasePath", func(t *testing.T) {
		ts := host("/cgi-bin/stacks", "STACKS_BASE_PATH=library")
		r := get(t, browser(t), ts.URL+"/cgi-bin/stacks/login")
		if r.StatusCode != http.StatusInternalServerError {
			t.Errorf("with STACKS_BASE_PATH=library: %d, want the CGI host's 500", r.StatusCode)
		}
	})
}

// browser is a client with a cookie jar that does not follow redirects.
func browser(t *testing.T) *http.Client {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func get(t *testing.T, c *http.Client, u string) *http.Response {
	t.Helper()
	r, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Body.Close() })
	return r
}

func readBody(t *testing.T, r *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
