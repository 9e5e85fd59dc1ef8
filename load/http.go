package load

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/stacks-ils/stacks/deskclient"
)

// Desk is how a virtual desk works the staff site.
type Desk int

const (
	// DeskPages: every scan is a form post and the page its 303 leads to, as
	// in a browser without the desk script (two requests a scan).
	DeskPages Desk = iota
	// DeskScript: every scan is one post with HX-Request, answered with the
	// scan's row, as the desk script (static/stacks.js) sends it in a browser
	// with JavaScript; Finish too; Clear the list is a form post and a page in
	// both, as on the desk.
	DeskScript
)

// String is the desk's name on the command line and in reports.
func (d Desk) String() string {
	if d == DeskScript {
		return "script"
	}
	return "pages"
}

// ParseDesk reads a Desk's name.
func ParseDesk(s string) (Desk, error) {
	switch s {
	case "pages", "":
		return DeskPages, nil
	case "script":
		return DeskScript, nil
	}
	return 0, fmt.Errorf("--desk %q: give pages (form posts and pages, as without JavaScript) or script (the desk script's one request a scan)", s)
}

// HTTPDialer returns a Dialer that signs each virtual user in to the staff site at
// base as user/password, with its own cookie jar and its own keep-alive
// connection, as one browser at one desk would have; each scan is a form post
// and a page (DeskPages).
func HTTPDialer(base, user, password string) Dialer {
	return HTTPDeskDialer(base, user, password, DeskPages)
}

// HTTPDeskDialer is HTTPDialer for a desk that works as desk says.
func HTTPDeskDialer(base, user, password string, desk Desk) Dialer {
	return func(ctx context.Context, i int) (Terminal, error) {
		c := deskclient.New(base)
		c.HTTP.Transport = &http.Transport{
			DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			MaxIdleConns:        2,
			MaxIdleConnsPerHost: 2,
			IdleConnTimeout:     5 * time.Minute,
		}
		if err := login(ctx, c, user, password); err != nil {
			return nil, err
		}
		c.Timings = c.Timings[:0]
		if desk == DeskScript {
			return &scriptTerminal{httpTerminal{c: c}}, nil
		}
		return &httpTerminal{c: c}, nil
	}
}

// login signs in, and again after a pause while the server answers 429: it
// checks one sign-in per account at a time and refuses those that waited too
// long for their turn ("Wait a moment and try again"), which hundreds of desks
// signing in as the same user on a busy machine do. Sign-in is not measured, so
// waiting costs the run nothing; a wrong password is not retried.
func login(ctx context.Context, c *deskclient.Client, user, password string) error {
	for attempt := 1; ; attempt++ {
		_, err := c.Login(ctx, user, password)
		if err == nil || !strings.Contains(err.Error(), "(status 429)") || attempt == maxLoginAttempts {
			return err
		}
		t := time.NewTimer(time.Duration(attempt) * 250 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// maxLoginAttempts bounds the sign-in retries (about a minute of pauses).
const maxLoginAttempts = 20

// httpTerminal is a desk over HTTP. Each transaction is a form post and the page
// its 303 leads to, checked the way a person would check it: the right status
// and the scanned item on the page.
type httpTerminal struct {
	c *deskclient.Client
}

// post submits a form and checks that it was answered 303 and that the page it
// led to is a 200 showing every text.
func (t *httpTerminal) post(ctx context.Context, path string, form url.Values, texts ...string) (Result, error) {
	t.c.Timings = t.c.Timings[:0]
	p, err := t.c.Post(ctx, path, form)
	res := t.serverTime()
	if err != nil {
		return res, err
	}
	if len(t.c.Timings) != 2 || t.c.Timings[0].Status != http.StatusSeeOther || p.Status != http.StatusOK {
		return res, fmt.Errorf("POST %s %s: %s", path, form.Encode(), statuses(t.c.Timings))
	}
	for _, s := range texts {
		if !strings.Contains(p.Body, s) {
			return res, fmt.Errorf("POST %s: the page (%s) does not show %q", path, p.URL, s)
		}
	}
	return res, nil
}

// serverTime is the server's own time (Server-Timing) over the requests
// since Timings was emptied.
func (t *httpTerminal) serverTime() Result {
	var res Result
	for _, tm := range t.c.Timings {
		res.Server += tm.App
		res.Known = res.Known || tm.App > 0
	}
	return res
}

// statuses describes the statuses of a transaction's requests: "status 200" for a
// form post answered with a page (a validation error), "303 then 500", ...
func statuses(ts []deskclient.Timing) string {
	var b strings.Builder
	b.WriteString("status ")
	for i, t := range ts {
		if i > 0 {
			b.WriteString(" then ")
		}
		fmt.Fprintf(&b, "%d", t.Status)
	}
	if len(ts) == 1 {
		b.WriteString(", expected 303 then 200")
	}
	return b.String()
}

func (t *httpTerminal) Patron(ctx context.Context, s *Share) (Result, error) {
	return t.post(ctx, "/checkout/patron", url.Values{"card": {s.Card}}, `name="barcode"`)
}

func (t *httpTerminal) Checkout(ctx context.Context, s *Share, barcode string) (Result, error) {
	return t.post(ctx, "/checkout", url.Values{"barcode": {barcode}}, "<td>"+barcode+"</td>")
}

func (t *httpTerminal) Checkin(ctx context.Context, barcode string) (Result, error) {
	return t.post(ctx, "/checkin", url.Values{"barcode": {barcode}}, "<td>"+barcode+"</td>")
}

func (t *httpTerminal) EndVisit(ctx context.Context) error {
	if _, err := t.c.Post(ctx, "/checkout/done", url.Values{}); err != nil {
		return err
	}
	_, err := t.c.Post(ctx, "/checkin/clear", url.Values{})
	t.c.Timings = t.c.Timings[:0]
	return err
}

func (t *httpTerminal) Close() error {
	t.c.HTTP.CloseIdleConnections()
	return nil
}

// SessionHeader signs in to the staff site at base and returns the header that
// carries the session cookie, for requests made without a cookie jar (Flood).
func SessionHeader(ctx context.Context, base, user, password string) (http.Header, error) {
	c := deskclient.New(base)
	if _, err := c.Login(ctx, user, password); err != nil {
		return nil, err
	}
	u, err := url.Parse(c.Base + "/")
	if err != nil {
		return nil, err
	}
	var parts []string
	for _, ck := range c.HTTP.Jar.Cookies(u) {
		parts = append(parts, ck.Name+"="+ck.Value)
	}
	if len(parts) == 0 {
		return nil, fmt.Errorf("signed in to %s but no session cookie was set", base)
	}
	return http.Header{"Cookie": {strings.Join(parts, "; ")}}, nil
}

// scriptTerminal is a desk whose scans go as the desk script sends them: one
// POST with HX-Request a scan, answered 200 with the scan's row, which must be
// done (checked out, checked in, the patron's visit opened) and name the scan.
type scriptTerminal struct {
	httpTerminal
}

// scan sends one scan and checks its row: outcome (done, info) and the
// scanned text.
func (t *scriptTerminal) scan(ctx context.Context, path string, form url.Values, outcome, scanned string) (Result, error) {
	t.c.Timings = t.c.Timings[:0]
	p, err := t.c.PostScript(ctx, path, form)
	res := t.serverTime()
	if err != nil {
		return res, err
	}
	if p.Status != http.StatusOK {
		return res, fmt.Errorf("POST %s %s (desk script): status %d, expected 200", path, form.Encode(), p.Status)
	}
	for _, s := range []string{`data-outcome="` + outcome + `"`, `data-scan="` + scanned + `"`} {
		if !strings.Contains(p.Body, s) {
			return res, fmt.Errorf("POST %s %s (desk script): the answer does not show %s", path, form.Encode(), s)
		}
	}
	return res, nil
}

func (t *scriptTerminal) Patron(ctx context.Context, s *Share) (Result, error) {
	return t.scan(ctx, "/checkout/scan", url.Values{"scan": {s.Card}}, "info", s.Card)
}

func (t *scriptTerminal) Checkout(ctx context.Context, s *Share, barcode string) (Result, error) {
	return t.scan(ctx, "/checkout/scan", url.Values{"scan": {barcode}}, "done", barcode)
}

func (t *scriptTerminal) Checkin(ctx context.Context, barcode string) (Result, error) {
	return t.scan(ctx, "/checkin", url.Values{"barcode": {barcode}}, "done", barcode)
}

// EndVisit is Finish through the desk script, then Clear the list (a form).
func (t *scriptTerminal) EndVisit(ctx context.Context) error {
	p, err := t.c.PostScript(ctx, "/checkout/done", url.Values{})
	if err != nil {
		return err
	}
	if p.Status != http.StatusOK {
		return fmt.Errorf("POST /checkout/done (desk script): status %d, expected 200", p.Status)
	}
	_, err = t.c.Post(ctx, "/checkin/clear", url.Values{})
	t.c.Timings = t.c.Timings[:0]
	return err
}
