package e2e

import (
	"context"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/stacks-ils/stacks/deskclient"
)

// TestLighttpd serves Stacks through a real web server, Debian's lighttpd on
// loopback, once as CGI (a new process per request, mod_cgi) and once as FastCGI
// (one `stacks fcgi` that lighttpd starts, mod_fastcgi), each at its mount: the
// redirect to sign in, the sign-in form post, the session cookie, a stylesheet and a
// script with their types and cache headers, the Server-Timing header, and the whole
// browser desk session of docs/desk-session.md.
func TestLighttpd(t *testing.T) {
	t.Parallel()
	browser := launchBrowser(t)
	for _, mode := range []httpdMode{httpdCGI, httpdFastCGI} {
		t.Run(mode.String(), func(t *testing.T) {
			t.Parallel() // each on a lighttpd and demo library of its own
			mount := mode.mount()
			srv := startLighttpd(t, mode, mount)
			site := strings.TrimSuffix(srv.BaseURL, mount)
			client := httpClient()
			get := func(t *testing.T, path string, cookies []*http.Cookie) (*http.Response, string) {
				t.Helper()
				req, err := http.NewRequest("GET", site+path, nil)
				if err != nil {
					t.Fatal(err)
				}
				for _, c := range cookies {
					req.AddCookie(c)
				}
				return do(t, client, req)
			}

			t.Run("Redirect", func(t *testing.T) {
				for _, path := range []string{"/", "/checkout"} {
					resp, _ := get(t, mount+path, nil)
					if resp.StatusCode != http.StatusSeeOther {
						t.Fatalf("GET %s without a session: %s, want 303 to the login page", mount+path, resp.Status)
					}
					if loc := location(t, resp); loc.Path != mount+"/login" {
						t.Errorf("GET %s without a session: Location %q, want the login page %s", mount+path, loc, mount+"/login")
					}
				}
			})

			var session []*http.Cookie
			t.Run("FormPost", func(t *testing.T) {
				resp, body := postForm(t, client, srv.BaseURL+"/login", url.Values{"username": {"desk"}, "password": {"wrong"}})
				if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "not right") {
					t.Errorf("POST %s/login with a wrong password: %s, want 401 and the form saying it is not right\n%s", mount, resp.Status, body)
				}
				resp, body = postForm(t, client, srv.BaseURL+"/login", url.Values{"username": {"desk"}, "password": {"desk"}})
				if resp.StatusCode != http.StatusSeeOther {
					t.Fatalf("POST %s/login as desk: %s, want 303\n%s", mount, resp.Status, body)
				}
				if loc := location(t, resp); !strings.HasPrefix(loc.Path, mount+"/") {
					t.Errorf("POST %s/login as desk: Location %q, want a page under %s/", mount, loc, mount)
				}
				session = resp.Cookies()
				if len(session) == 0 {
					t.Fatalf("POST %s/login as desk: no session cookie (Set-Cookie %q)", mount, resp.Header.Values("Set-Cookie"))
				}
			})

			t.Run("SessionCookie", func(t *testing.T) {
				if len(session) == 0 {
					t.Fatal("no session cookie: FormPost failed")
				}
				// The base path and a slash: the browser sends Stacks' session only to
				// Stacks, not to the rest of the site.
				wantPath := mount + "/"
				for _, c := range session {
					if c.Path != wantPath || !c.HttpOnly || c.SameSite == http.SameSiteNoneMode || c.SameSite == http.SameSiteDefaultMode {
						t.Errorf("cookie %s: Path %q, HttpOnly %v, SameSite %v; want Path %q, HttpOnly, SameSite Lax or Strict", c.Name, c.Path, c.HttpOnly, c.SameSite, wantPath)
					}
				}
				resp, body := get(t, mount+"/checkout", session)
				if resp.StatusCode != http.StatusOK || !strings.Contains(body, "Log out") || !strings.Contains(body, "Card number") {
					t.Fatalf("GET %s/checkout with the session cookie: %s, want 200 with Log out and Card number\n%s", mount, resp.Status, body)
				}
				// Server-Timing comes through the web server: the desk's timing evidence.
				st := resp.Header.Get("Server-Timing")
				app, db, statements, ok := deskclient.ParseServerTiming(st)
				if !ok || app <= 0 || db <= 0 || statements <= 0 {
					t.Errorf("GET %s/checkout: Server-Timing %q (app %v, db %v, %d statements); want app, db and sql", mount, st, app, db, statements)
				}
			})

			// The branch the desk works at is the session's, in the database: a
			// change made in one CGI process is there in the next one.
			t.Run("ChangeBranch", func(t *testing.T) {
				if len(session) == 0 {
					t.Fatal("no session cookie: FormPost failed")
				}
				req, err := http.NewRequest("POST", srv.BaseURL+"/branch", strings.NewReader(url.Values{"branch": {"EAS"}}.Encode()))
				if err != nil {
					t.Fatal(err)
				}
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				for _, c := range session {
					req.AddCookie(c)
				}
				if resp, body := do(t, client, req); resp.StatusCode != http.StatusSeeOther {
					t.Fatalf("POST %s/branch: %s, want 303\n%s", mount, resp.Status, body)
				}
				if _, body := get(t, mount+"/", session); !strings.Contains(body, "Desk at Eastside (EAS)") {
					t.Errorf("GET %s/ after changing branch: the header does not say Desk at Eastside (EAS)\n%s", mount, body)
				}
			})

			t.Run("StaticAsset", func(t *testing.T) {
				_, body := get(t, mount+"/login", nil)
				for _, asset := range []struct {
					pattern, contentType string
				}{
					{`<link rel="stylesheet" href="([^"]*/stacks\.css[^"]*)"`, "text/css; charset=utf-8"},
					{`<script src="([^"]*/stacks\.js[^"]*)"`, "text/javascript; charset=utf-8"},
				} {
					m := regexp.MustCompile(asset.pattern).FindStringSubmatch(body)
					if m == nil {
						t.Errorf("GET %s/login: no %s in the page\n%s", mount, asset.pattern, body)
						continue
					}
					href := html.UnescapeString(m[1])
					if !strings.HasPrefix(href, mount+"/static/") {
						t.Errorf("asset link %q, want it under %s/static/", href, mount)
						continue
					}
					resp, content := get(t, href, nil)
					if resp.StatusCode != http.StatusOK || content == "" {
						t.Errorf("GET %s: %s, %d bytes; want 200 and the file", href, resp.Status, len(content))
						continue
					}
					if ct := resp.Header.Get("Content-Type"); ct != asset.contentType {
						t.Errorf("GET %s: Content-Type %q, want %q", href, ct, asset.contentType)
					}
					if cc := resp.Header.Get("Cache-Control"); cc != "public, max-age=31536000, immutable" {
						t.Errorf("GET %s: Cache-Control %q, want a year, immutable (the link carries the file's version)", href, cc)
					}
				}
			})

			t.Run("DeskSession", func(t *testing.T) {
				runDeskSession(t, browser, srv, "")
			})

			// The scripted desk session (make desk-timing's server-side client)
			// through the same mount: it follows the site's redirects, which name
			// the whole path under the mount. The session checks items out and in
			// as the browser's did, so it needs a library of its own: a second
			// lighttpd on a fresh demo library.
			t.Run("ScriptedSession", func(t *testing.T) {
				fresh := startLighttpd(t, mode, mount)
				steps, err := runScriptedSession(context.Background(), fresh.BaseURL)
				if err != nil {
					t.Fatalf("the scripted desk session at %s: %v", fresh.BaseURL, err)
				}
				if len(steps) == 0 {
					t.Fatal("the scripted desk session ran no steps")
				}
			})
		})
	}
}

// do sends req and reads the whole answer.
func do(t *testing.T, client *http.Client, req *http.Request) (*http.Response, string) {
	t.Helper()
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the answer: %v", req.Method, req.URL, err)
	}
	return resp, string(b)
}

// postForm posts a form as the login page's does.
func postForm(t *testing.T, client *http.Client, target string, form url.Values) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest("POST", target, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return do(t, client, req)
}

// location is a redirect's target.
func location(t *testing.T, resp *http.Response) *url.URL {
	t.Helper()
	loc, err := resp.Location()
	if err != nil {
		t.Fatalf("%s %s: %s without a usable Location: %v", resp.Request.Method, resp.Request.URL, resp.Status, err)
	}
	return loc
}
