package load_test

import (
	"context"
	"fmt"
	"html"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stacks-ils/stacks/load"
)

// fakeDesk mimics the staff site's check-out and check-in for the load tool: the
// same forms, redirects and texts, with fixed delays in the form posts and
// errors for chosen items, and it counts what it served.
//
//   - check-out (POST /checkout) takes coDelay; an item whose barcode ends in
//     "-co-fails" is refused with 500 and not lent;
//   - check-in (POST /checkin) takes ciDelay; an item whose barcode ends in
//     "-ci-fails" is returned but the page it leads to does not list it (an error
//     for the load tool: a missing text);
//   - check-in of an item that is not on loan is answered 422, as Stacks does;
//   - every response says Server-Timing app;dur=coApp (check-out post),
//     ciApp (check-in post) or pageApp (any page).
type fakeDesk struct {
	coDelay, ciDelay time.Duration

	mu       sync.Mutex
	onLoan   map[string]bool
	sessions map[string]string // session cookie → patron being served
	// counts by what happened
	coOK, coFailed         int
	ciOK, ciMissing        int
	ciNotOnLoan            int
	patronScans, logins    int
	coOKOf, ciOf           map[string]int
	notLoopback, badOrigin int
}

const (
	coApp   = 20.0 // ms
	ciApp   = 5.0
	pageApp = 1.0
)

func newFakeDesk(coDelay, ciDelay time.Duration) *fakeDesk {
	return &fakeDesk{coDelay: coDelay, ciDelay: ciDelay, onLoan: map[string]bool{}, sessions: map[string]string{},
		coOKOf: map[string]int{}, ciOf: map[string]int{}}
}

func timing(w http.ResponseWriter, app float64) {
	w.Header().Set("Server-Timing", fmt.Sprintf(`app;dur=%.2f, db;dur=0.10, sql;desc="3"`, app))
}

func (f *fakeDesk) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h, _, _ := net.SplitHostPort(r.RemoteAddr); h != "127.0.0.1" {
		f.mu.Lock()
		f.notLoopback++
		f.mu.Unlock()
	}
	if r.Method == http.MethodPost && r.Header.Get("Sec-Fetch-Site") != "same-origin" {
		f.mu.Lock()
		f.badOrigin++
		f.mu.Unlock()
	}
	page := func(body string) {
		timing(w, pageApp)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<!doctype html><title>Stacks</title>%s", body)
	}
	if r.URL.Path == "/login" && r.Method == http.MethodPost {
		f.mu.Lock()
		f.logins++
		token := fmt.Sprintf("s%d", f.logins)
		f.mu.Unlock()
		if r.PostFormValue("username") != "desk" || r.PostFormValue("password") != "desk" {
			page(`<form action="/login" method="post"></form>`)
			return
		}
		http.SetCookie(w, &http.Cookie{Name: "session", Value: token, Path: "/"})
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	ck, err := r.Cookie("session")
	if err != nil {
		http.Redirect(w, r, "/login", http.StatusSeeOther)
		return
	}
	session := ck.Value
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/":
		page(`<p>Morgan Desk</p><button>Log out</button>`)
	case r.Method == http.MethodGet && r.URL.Path == "/checkout":
		list := ""
		if bc := r.URL.Query().Get("last"); bc != "" {
			list = "<table><tr><td>" + html.EscapeString(bc) + "</td></tr></table>"
		}
		page(`<input id="barcode" name="barcode">` + list)
	case r.Method == http.MethodGet && r.URL.Path == "/checkin":
		list := ""
		if bc := r.URL.Query().Get("last"); bc != "" {
			list = "<table><tr><td>" + html.EscapeString(bc) + "</td></tr></table>"
		}
		page(`<input id="barcode" name="barcode">` + list)
	case r.Method == http.MethodPost && r.URL.Path == "/checkout/patron":
		f.mu.Lock()
		f.patronScans++
		f.sessions[session] = r.PostFormValue("card")
		f.mu.Unlock()
		http.Redirect(w, r, "/checkout", http.StatusSeeOther)
	case r.Method == http.MethodPost && r.URL.Path == "/checkout":
		time.Sleep(f.coDelay) // the emulated server's latency
		timing(w, coApp)
		bc := r.PostFormValue("barcode")
		f.mu.Lock()
		defer f.mu.Unlock()
		switch {
		case f.sessions[session] == "":
			http.Error(w, "no patron", http.StatusConflict)
		case strings.HasSuffix(bc, "-co-fails"):
			f.coFailed++
			http.Error(w, "injected failure", http.StatusInternalServerError)
		case f.onLoan[bc]:
			http.Error(w, "already on loan", http.StatusConflict)
		default:
			f.onLoan[bc] = true
			f.coOK++
			f.coOKOf[bc]++
			http.Redirect(w, r, "/checkout?last="+url.QueryEscape(bc), http.StatusSeeOther)
		}
	case r.Method == http.MethodPost && r.URL.Path == "/checkin":
		time.Sleep(f.ciDelay) // the emulated server's latency
		timing(w, ciApp)
		bc := r.PostFormValue("barcode")
		f.mu.Lock()
		defer f.mu.Unlock()
		f.ciOf[bc]++
		switch {
		case !f.onLoan[bc]:
			f.ciNotOnLoan++
			http.Error(w, "not on loan", http.StatusUnprocessableEntity)
		case strings.HasSuffix(bc, "-ci-fails"):
			delete(f.onLoan, bc)
			f.ciMissing++
			http.Redirect(w, r, "/checkin", http.StatusSeeOther)
		default:
			delete(f.onLoan, bc)
			f.ciOK++
			http.Redirect(w, r, "/checkin?last="+url.QueryEscape(bc), http.StatusSeeOther)
		}
	case r.Method == http.MethodPost && r.URL.Path == "/checkout/done":
		f.mu.Lock()
		delete(f.sessions, session)
		f.mu.Unlock()
		http.Redirect(w, r, "/checkout", http.StatusSeeOther)
	case r.Method == http.MethodPost && r.URL.Path == "/checkin/clear":
		http.Redirect(w, r, "/checkin", http.StatusSeeOther)
	default:
		http.NotFound(w, r)
	}
}

// startFake serves f on 127.0.0.1 (httptest's default).
func startFake(t *testing.T, f *fakeDesk) string {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	if err := load.CheckLoopback(srv.URL); err != nil {
		t.Fatal(err)
	}
	return srv.URL
}

func shares(n int, suffixes ...string) []load.Share {
	out := make([]load.Share, n)
	for i := range out {
		out[i].Card = fmt.Sprintf("P%04d", i+1)
		for j, s := range suffixes {
			out[i].Barcodes = append(out[i].Barcodes, fmt.Sprintf("U%02d-I%d%s", i, j, s))
		}
	}
	return out
}

func near(got, want, slack time.Duration) bool { return got >= want && got <= want+slack }

// TestRunExact runs one user for an exact number of transactions, so that every
// figure can be predicted: each visit checks out three items (one refused) and
// checks in the two lent (one with a missing text), 5 measured transactions a
// visit, 25 in all.
func TestRunExact(t *testing.T) {
	f := newFakeDesk(20*time.Millisecond, 5*time.Millisecond)
	base := startFake(t, f)
	rep, err := load.Run(context.Background(), load.Config{
		Users: 1, Shares: shares(1, "", "-co-fails", "-ci-fails"),
		Dial: load.HTTPDialer(base, "desk", "desk"), Count: 25,
	})
	if err != nil {
		t.Fatal(err)
	}
	co, ci, pa := rep.Ops[load.OpCheckout], rep.Ops[load.OpCheckin], rep.Ops[load.OpPatron]
	if co.Count != 10 || co.Errors != 5 || ci.Count != 5 || ci.Errors != 5 || pa.Count != 5 || pa.Errors != 0 {
		t.Errorf("check-out %d ok %d errors, check-in %d ok %d errors, patron %d ok %d errors; want 10/5, 5/5, 5/0",
			co.Count, co.Errors, ci.Count, ci.Errors, pa.Count, pa.Errors)
	}
	// What the server saw agrees.
	f.mu.Lock()
	if f.coOK != 10 || f.coFailed != 5 || f.ciOK != 5 || f.ciMissing != 5 || f.patronScans != 5 || len(f.onLoan) != 0 {
		t.Errorf("server: check-out %d ok %d failed, check-in %d ok %d missing, %d patron scans, %d still on loan",
			f.coOK, f.coFailed, f.ciOK, f.ciMissing, f.patronScans, len(f.onLoan))
	}
	// The refused item was put back quietly (not on loan: 422), and so was the
	// item whose check-in page did not list it: 10 unmeasured check-ins.
	if f.ciNotOnLoan != 10 || rep.Unmeasured != 10 {
		t.Errorf("%d check-ins of items not on loan, %d reported unmeasured; want 10 and 10", f.ciNotOnLoan, rep.Unmeasured)
	}
	f.mu.Unlock()
	if rep.Transactions() != 15 || rep.TotalTPS != load.Rate(15, rep.Elapsed) {
		t.Errorf("transactions %d, total %v/s over %v", rep.Transactions(), rep.TotalTPS, rep.Elapsed)
	}
	if co.TPS != load.Rate(10, rep.Elapsed) || ci.TPS != load.Rate(5, rep.Elapsed) {
		t.Errorf("tx/s: check-out %v, check-in %v over %v", co.TPS, ci.TPS, rep.Elapsed)
	}
	// A transaction is the post and the page it leads to: the server's own time is
	// their Server-Timing app summed.
	if !co.ServerKnown || co.ServerMedian != 21*time.Millisecond || ci.ServerMedian != 6*time.Millisecond ||
		pa.ServerMedian != 1*time.Millisecond {
		t.Errorf("server medians: check-out %v, check-in %v, patron %v; want 21ms, 6ms, 1ms", co.ServerMedian, ci.ServerMedian, pa.ServerMedian)
	}
	// Wall times: at least the server's delay; the slack allows a slow machine.
	const slack = 150 * time.Millisecond
	for _, c := range []struct {
		name string
		s    load.Summary
		d    time.Duration
	}{{"check-out", co, 20 * time.Millisecond}, {"check-in", ci, 5 * time.Millisecond}} {
		if !near(c.s.Median, c.d, slack) || !near(c.s.Avg, c.d, slack) || c.s.P95 < c.s.Median || c.s.P99 < c.s.P95 ||
			c.s.Max < c.s.P99 || c.s.Max > c.d+slack*4 {
			t.Errorf("%s: avg %v median %v p95 %v p99 %v max %v, want about %v", c.name, c.s.Avg, c.s.Median, c.s.P95, c.s.P99, c.s.Max, c.d)
		}
	}
	if len(rep.Errors) != 2 {
		t.Errorf("error kinds = %v, want the 500 and the missing text", rep.Errors)
	}
	for msg := range rep.Errors {
		if !strings.Contains(msg, "status 500, expected 303 then 200") && !strings.Contains(msg, "-ci-fails") {
			t.Errorf("unexpected error %q", msg)
		}
	}
}

// TestRunConcurrent runs several users against the fake desk for a count, with no
// think time, and checks what is exact under concurrency.
func TestRunConcurrent(t *testing.T) {
	f := newFakeDesk(20*time.Millisecond, 5*time.Millisecond)
	base := startFake(t, f)
	const users, count = 8, 200
	rep, err := load.Run(context.Background(), load.Config{
		Users: users, Shares: shares(users, "", "", "-co-fails", "-ci-fails"),
		Dial: load.HTTPDialer(base, "desk", "desk"), Count: count,
	})
	if err != nil {
		t.Fatal(err)
	}
	co, ci := rep.Ops[load.OpCheckout], rep.Ops[load.OpCheckin]
	if got := co.Count + co.Errors + ci.Count + ci.Errors; got != count {
		t.Errorf("%d measured check-outs and check-ins, want exactly %d", got, count)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	// Every check-out is measured: the server's counts are the report's.
	if co.Count != f.coOK || co.Errors != f.coFailed {
		t.Errorf("check-out: reported %d ok %d errors, server %d ok %d failed", co.Count, co.Errors, f.coOK, f.coFailed)
	}
	// Check-ins: the measured ones, plus at most one put-back per item still out
	// when the run ended (3 lendable items per user).
	if ci.Count > f.ciOK || ci.Count < f.ciOK-2*users || ci.Errors > f.ciMissing || ci.Errors < f.ciMissing-users {
		t.Errorf("check-in: reported %d ok %d errors, server %d ok %d missing", ci.Count, ci.Errors, f.ciOK, f.ciMissing)
	}
	if len(f.onLoan) != 0 {
		t.Errorf("%d items left on loan: %v", len(f.onLoan), f.onLoan)
	}
	if f.logins != users {
		t.Errorf("%d sign-ins, want one per user (%d)", f.logins, users)
	}
	if f.notLoopback != 0 || f.badOrigin != 0 {
		t.Errorf("%d requests not from 127.0.0.1, %d form posts without Sec-Fetch-Site same-origin", f.notLoopback, f.badOrigin)
	}
	// Every user worked on its own share only.
	for i := range users {
		if f.coOKOf[fmt.Sprintf("U%02d-I0", i)] == 0 {
			t.Errorf("user %d lent nothing", i+1)
		}
	}
	if co.ServerMedian != 21*time.Millisecond || ci.ServerMedian != 6*time.Millisecond {
		t.Errorf("server medians: check-out %v, check-in %v", co.ServerMedian, ci.ServerMedian)
	}
	// The client's medians include the server's time. Which of the two is
	// longer is not asserted: on a loaded machine the client's own waits can
	// swamp the 15 ms between the server's.
	if co.Median < 20*time.Millisecond || ci.Median < 5*time.Millisecond {
		t.Errorf("medians: check-out %v, check-in %v", co.Median, ci.Median)
	}
	if rep.TotalTPS != load.Rate(co.Count+ci.Count, rep.Elapsed) {
		t.Errorf("total %v/s for %d over %v", rep.TotalTPS, co.Count+ci.Count, rep.Elapsed)
	}
}

// TestRunRoundRobin spreads users over two servers: user i signs in to server
// i mod 2 and does all its work there, as behind a balancer that keeps each desk
// on one server.
func TestRunRoundRobin(t *testing.T) {
	desks := []*fakeDesk{newFakeDesk(0, 0), newFakeDesk(0, 0)}
	dialers := make([]load.Dialer, len(desks))
	for i, f := range desks {
		dialers[i] = load.HTTPDialer(startFake(t, f), "desk", "desk")
	}
	const users = 5
	rep, err := load.Run(context.Background(), load.Config{
		Users: users, Shares: shares(users, "", ""), Dial: load.RoundRobin(dialers...), Count: 60,
	})
	if err != nil {
		t.Fatal(err)
	}
	if rep.ErrorCount() != 0 {
		t.Errorf("%d errors: %v", rep.ErrorCount(), rep.Errors)
	}
	for n, f := range desks {
		f.mu.Lock()
		if want := (users + 1 - n) / 2; f.logins != want {
			t.Errorf("server %d: %d sign-ins, want %d", n+1, f.logins, want)
		}
		for i := range users {
			lent := f.coOKOf[fmt.Sprintf("U%02d-I0", i)]
			if mine := i%2 == n; mine != (lent > 0) {
				t.Errorf("server %d lent user %d's first item %d times; user %d belongs to server %d", n+1, i+1, lent, i+1, i%2+1)
			}
		}
		f.mu.Unlock()
	}
}

// TestRunPaced checks think time and the duration: a user with a 100 ms mean
// pause does about one scan in 100 ms, and the run ends on time.
func TestRunPaced(t *testing.T) {
	f := newFakeDesk(0, 0)
	base := startFake(t, f)
	const users, think, duration = 4, 100 * time.Millisecond, 2 * time.Second
	start := time.Now()
	rep, err := load.Run(context.Background(), load.Config{
		Users: users, Shares: shares(users, "", ""), Dial: load.HTTPDialer(base, "desk", "desk"),
		Think: think, Duration: duration,
	})
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	// Upper bounds loose enough for a loaded machine.
	if took > duration+20*time.Second || rep.Elapsed < duration-think || rep.Elapsed > duration+10*time.Second {
		t.Errorf("run took %v, measured %v, for a %v duration", took, rep.Elapsed, duration)
	}
	// Scans: patron, two check-outs, two check-ins per visit, one pause before
	// each. At most duration/(think×(1-jitter)) each; with the pauses' mean at
	// think, about duration/think.
	scans := rep.Ops[load.OpPatron].Count + rep.Transactions()
	perUser := float64(scans) / users
	// A user's scan takes its pause and then the request: the lower bound
	// allows the requests' own time (long on a loaded machine).
	var slowest time.Duration
	for _, op := range load.Ops {
		slowest = max(slowest, rep.Ops[op].Avg)
	}
	if max := float64(duration) / float64(think/2); perUser > max || perUser < 0.5*float64(duration)/float64(think+slowest) {
		t.Errorf("%.1f scans per user in %v with %v think time, want about %.0f", perUser, duration, think, float64(duration)/float64(think))
	}
	if rep.ErrorCount() != 0 {
		t.Errorf("errors: %v", rep.Errors)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.onLoan) != 0 {
		t.Errorf("%d items left on loan", len(f.onLoan))
	}
}

func TestRunRefuses(t *testing.T) {
	dial := load.HTTPDialer("http://127.0.0.1:1", "desk", "desk")
	t.Run("TooFewShares", func(t *testing.T) {
		_, err := load.Run(context.Background(), load.Config{Users: 3, Shares: shares(2, ""), Dial: dial, Count: 1})
		if err == nil || !strings.Contains(err.Error(), "2 shares for 3 users") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("Unbounded", func(t *testing.T) {
		_, err := load.Run(context.Background(), load.Config{Users: 1, Shares: shares(1, ""), Dial: dial})
		if err == nil || !strings.Contains(err.Error(), "stop by itself") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("LoginFails", func(t *testing.T) {
		f := newFakeDesk(0, 0)
		base := startFake(t, f)
		_, err := load.Run(context.Background(), load.Config{Users: 2, Shares: shares(2, ""),
			Dial: load.HTTPDialer(base, "desk", "wrong"), Count: 4})
		if err == nil || !strings.Contains(err.Error(), "refused") {
			t.Errorf("err = %v", err)
		}
	})
}

// TestFlood checks the connection test against a server that fails one request
// in ten.
func TestFlood(t *testing.T) {
	var mu sync.Mutex
	served, failed := 0, 0
	conns := map[string]bool{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		conns[r.RemoteAddr] = true
		if r.Header.Get("Cookie") != "session=abc" {
			http.Error(w, "no cookie", http.StatusForbidden)
			failed++
			return
		}
		served++
		if served%10 == 0 {
			failed++
			http.Error(w, "injected", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	}))
	defer srv.Close()
	res, err := load.Flood(context.Background(), load.FloodConfig{URL: srv.URL + "/healthz", Conns: 20,
		Duration: 500 * time.Millisecond, Header: http.Header{"Cookie": {"session=abc"}}})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	// The first request on each connection (opening it) is not in Requests, but its
	// failure would be in Errors.
	if res.Errors != failed || res.Requests+res.Errors+20 < served || res.Requests+res.Errors > served {
		t.Errorf("reported %d ok %d errors; server served %d, failed %d", res.Requests, res.Errors, served, failed)
	}
	// One connection each, kept alive: a few more when a kept connection was
	// closed and opened again (make test saw 21 once, on a loaded machine),
	// never anything near one a request.
	if len(conns) < 20 || len(conns) > 24 || len(conns) > served/10 {
		t.Errorf("%d connections for %d requests, want 20 (one each, kept alive)", len(conns), served)
	}
	if res.RPS != load.Rate(res.Requests, res.Elapsed) || res.Requests == 0 {
		t.Errorf("%v requests a second for %d in %v", res.RPS, res.Requests, res.Elapsed)
	}
	if _, err := load.Flood(context.Background(), load.FloodConfig{URL: "http://example.org/", Conns: 1, Duration: time.Second}); err == nil {
		t.Error("Flood against example.org: no error")
	}
}

// TestRunWarmup: with a warm-up the users work before the measured time, and
// none of that work is in the figures but its errors, counted apart; a count
// is counted from the warm-up's end.
func TestRunWarmup(t *testing.T) {
	f := newFakeDesk(20*time.Millisecond, 5*time.Millisecond)
	base := startFake(t, f)
	var startedAfter time.Duration
	began := time.Now()
	rep, err := load.Run(context.Background(), load.Config{
		Users: 1, Shares: shares(1, "", "-co-fails", ""),
		Dial: load.HTTPDialer(base, "desk", "desk"), Count: 12, Warmup: 400 * time.Millisecond,
		OnStart: func() { startedAfter = time.Since(began) },
	})
	if err != nil {
		t.Fatal(err)
	}
	co, ci, pa := rep.Ops[load.OpCheckout], rep.Ops[load.OpCheckin], rep.Ops[load.OpPatron]
	if got := co.Count + co.Errors + ci.Count + ci.Errors; got != 12 {
		t.Errorf("measured %d check-outs and check-ins (ok or not), want the count, 12", got)
	}
	f.mu.Lock()
	served := f.coOK + f.coFailed + f.ciOK + f.ciMissing
	patrons := f.patronScans
	f.mu.Unlock()
	if served <= 12 || patrons <= pa.Count {
		t.Errorf("the server served %d check-outs and check-ins and %d patron scans, the report has 12 and %d: the warm-up's work is missing or measured",
			served, patrons, pa.Count)
	}
	if rep.Warmup != 400*time.Millisecond || rep.WarmupErrors == 0 {
		t.Errorf("warm-up %v with %d errors; want 400ms and the refused check-outs of the warm-up", rep.Warmup, rep.WarmupErrors)
	}
	// One item in three is refused: a third of the measured check-outs fail, the
	// warm-up's refusals are not among them.
	if co.Errors == 0 || co.Errors > co.Count {
		t.Errorf("measured check-outs: %d ok, %d errors", co.Count, co.Errors)
	}
	if startedAfter < 400*time.Millisecond {
		t.Errorf("OnStart ran %v after the run began, before the warm-up was over", startedAfter)
	}
	if rep.Elapsed <= 0 || rep.Elapsed > time.Since(began)-400*time.Millisecond {
		t.Errorf("elapsed %v includes the warm-up (whole run %v)", rep.Elapsed, time.Since(began))
	}
}
