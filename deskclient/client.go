// Package deskclient drives the staff site over HTTP the way a browser does (a
// cookie jar, form posts, following redirects) without a browser, like Perl's
// Test::WWW::Mechanize, and times every request from its Server-Timing, so the
// server's share of a desk session can be measured apart from the browser's.
// The load test drives its desks with it; the browser suite (e2e) runs the
// scripted desk session of docs/desk-session.md with it (make desk-timing).
package deskclient

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Timing is the Server-Timing of one response, with the client's wall time.
type Timing struct {
	Method, Path string
	Status       int
	Wall         time.Duration
	// App, DB and Statements are the server's own figures (Server-Timing).
	App, DB    time.Duration
	Statements int
	Selects    int
	// Page is true for an HTML page (what a person waits for).
	Page bool
}

// Client is one signed-in (or signing-in) desk: a cookie jar and a base URL.
type Client struct {
	Base string
	HTTP *http.Client
	// Timings collects every request made, in order.
	Timings []Timing
}

// New returns a client for the server at base (http://127.0.0.1:8080).
func New(base string) *Client {
	jar, _ := cookiejar.New(nil)
	return &Client{
		Base: strings.TrimRight(base, "/"),
		HTTP: &http.Client{
			Jar:     jar,
			Timeout: 30 * time.Second,
			// Redirects are followed by hand, so that each request is timed.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
	}
}

var (
	serverTimingRE = regexp.MustCompile(`app;dur=([0-9.]+), db;dur=([0-9.]+), sql;desc="(\d+)"`)
	selectsRE      = regexp.MustCompile(`sel;desc="(\d+)"`)
)

// ParseServerTiming reads the app, db and statement count of a Server-Timing header.
func ParseServerTiming(h string) (app, dbt time.Duration, statements int, ok bool) {
	m := serverTimingRE.FindStringSubmatch(h)
	if m == nil {
		return 0, 0, 0, false
	}
	a, _ := strconv.ParseFloat(m[1], 64)
	d, _ := strconv.ParseFloat(m[2], 64)
	n, _ := strconv.Atoi(m[3])
	return time.Duration(a * float64(time.Millisecond)), time.Duration(d * float64(time.Millisecond)), n, true
}

// ParseSelects reads how many of a response's statements were SELECTs.
func ParseSelects(h string) int {
	m := selectsRE.FindStringSubmatch(h)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// Page is a response body with its final URL and status.
type Page struct {
	URL    string
	Status int
	Body   string
}

// do sends one request and records its timing.
func (c *Client) do(ctx context.Context, method, path string, form url.Values) (*http.Response, string, error) {
	return c.send(ctx, method, path, form, false)
}

// send is do; script marks the request as the desk script's (HX-Request, as
// htmx sends it).
func (c *Client) send(ctx context.Context, method, path string, form url.Values, script bool) (*http.Response, string, error) {
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(ctx, method, c.Base+path, body)
	if err != nil {
		return nil, "", err
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		// What a browser sends with a same-origin form post.
		req.Header.Set("Origin", c.origin())
		req.Header.Set("Sec-Fetch-Site", "same-origin")
	}
	if script {
		req.Header.Set("HX-Request", "true")
	}
	start := time.Now()
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return nil, "", fmt.Errorf("%s %s: %w", method, path, err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	wall := time.Since(start)
	if err != nil {
		return nil, "", fmt.Errorf("%s %s: %w", method, path, err)
	}
	t := Timing{Method: method, Path: path, Status: resp.StatusCode, Wall: wall,
		Page: strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") && len(b) > 0}
	t.App, t.DB, t.Statements, _ = ParseServerTiming(resp.Header.Get("Server-Timing"))
	t.Selects = ParseSelects(resp.Header.Get("Server-Timing"))
	c.Timings = append(c.Timings, t)
	return resp, string(b), nil
}

// origin is the scheme and host of c.Base, what a browser sends as Origin.
func (c *Client) origin() string {
	u, err := url.Parse(c.Base)
	if err != nil {
		return c.Base
	}
	return u.Scheme + "://" + u.Host
}

// sitePath turns a redirect's Location into a path of the site: the site may be
// mounted under a base path (c.Base is http://host/library), and its redirects
// name the whole path (/library/checkout), which the client asks for as
// /checkout under c.Base.
func (c *Client) sitePath(loc *url.URL) string {
	p := loc.RequestURI()
	if u, err := url.Parse(c.Base); err == nil && u.Path != "" && u.Path != "/" {
		if rest, ok := strings.CutPrefix(p, u.Path); ok && (rest == "" || rest[0] == '/' || rest[0] == '?') {
			if rest == "" || rest[0] == '?' {
				rest = "/" + rest
			}
			return rest
		}
	}
	return p
}

// follow sends a request and follows redirects (at most 5), as a browser does.
func (c *Client) follow(ctx context.Context, method, path string, form url.Values) (Page, error) {
	for i := 0; i < 6; i++ {
		resp, body, err := c.do(ctx, method, path, form)
		if err != nil {
			return Page{}, err
		}
		if resp.StatusCode < 300 || resp.StatusCode >= 400 {
			return Page{URL: path, Status: resp.StatusCode, Body: body}, nil
		}
		loc, err := resp.Location()
		if err != nil {
			return Page{}, fmt.Errorf("%s %s: redirect without Location", method, path)
		}
		path, method, form = c.sitePath(loc), http.MethodGet, nil
	}
	return Page{}, fmt.Errorf("too many redirects from %s", path)
}

// Get loads a page, following redirects.
func (c *Client) Get(ctx context.Context, path string) (Page, error) {
	return c.follow(ctx, http.MethodGet, path, nil)
}

// Post submits a form, following the redirect that answers it.
func (c *Client) Post(ctx context.Context, path string, form url.Values) (Page, error) {
	return c.follow(ctx, http.MethodPost, path, form)
}

// PostScript submits a form the way the desk script (static/stacks.js) does:
// with htmx's HX-Request header, answered with a fragment (the scan's row and the
// parts of the page it changed) instead of a redirect to a page; a redirect is
// not followed.
func (c *Client) PostScript(ctx context.Context, path string, form url.Values) (Page, error) {
	resp, body, err := c.send(ctx, http.MethodPost, path, form, true)
	if err != nil {
		return Page{}, err
	}
	return Page{URL: path, Status: resp.StatusCode, Body: body}, nil
}

// Login signs in.
func (c *Client) Login(ctx context.Context, user, password string) (Page, error) {
	p, err := c.Post(ctx, "/login", url.Values{"username": {user}, "password": {password}})
	if err == nil && strings.Contains(p.Body, `action="/login"`) {
		err = fmt.Errorf("login as %s refused (status %d)", user, p.Status)
	}
	return p, err
}
