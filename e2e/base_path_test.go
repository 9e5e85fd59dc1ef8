package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"

	"github.com/stacks-ils/stacks/load"
)

// TestDeskUnderBasePath runs the desk in Chromium with stacks serve
// --base-path /lib/x, as behind a proxy at a sub-path: a signed-out visit goes
// to the login page under the base and back; the desk's script sends scans to
// its URLs under the base (a checkout and a check-in, by scanner); the
// stylesheet loads; the idle end of a visit reaches the server; signing out
// lands on the login page under the base. A URL left at the root would be a
// 404 here: the server answers nothing outside /lib/x.
func TestDeskUnderBasePath(t *testing.T) {
	t.Parallel()
	const base = "/lib/x"
	srv := startServerAt(t, base)
	browser := launchBrowser(t)
	lib := openLibraryDB(t, srv)
	shares, err := load.SharesFromDB(context.Background(), srv.DB, load.ShareQuery{Branch: "CEN", Items: 2, Max: 2})
	if err != nil || len(shares) < 2 {
		t.Fatalf("demo shares: %v (%d)", err, len(shares))
	}
	page, bctx := newPage(t, browser)
	must(t, bctx.Clock().Install(), "installing the page clock")
	var notFound []string
	page.OnResponse(func(r playwright.Response) {
		if r.Status() == 404 {
			notFound = append(notFound, r.URL())
		}
	})

	_, err = page.Goto(srv.BaseURL + "/checkout")
	must(t, err, "opening the desk under %s", base)
	expectLoginPage(t, page)
	if !strings.Contains(page.URL(), base+"/login?next=") {
		t.Fatalf("signed out, the desk sent the browser to %s, want %s/login?next=...", page.URL(), base)
	}
	login(t, page, "desk", "desk")
	must(t, expect.Page(page).ToHaveURL(srv.BaseURL+"/checkout"), "back on the desk under the base after logging in")
	rules, err := page.Evaluate(`() => Array.from(document.styleSheets).filter(s => s.href && s.href.includes("` + base + `/static/stacks.css")).reduce((n, s) => n + s.cssRules.length, 0)`)
	must(t, err, "reading the page's stylesheets")
	if n, _ := rules.(int); n == 0 {
		t.Errorf("the stylesheet %s/static/stacks.css did not load (%v rules)", base, rules)
	}

	s := &scanner{t: t, page: page, srv: srv, gap: 100 * time.Millisecond}
	p := shares[0]
	s.scan(p.Card)
	s.settle()
	s.scan(p.Barcodes[0])
	s.settle()
	must(t, expect.Locator(s.row(p.Barcodes[0])).ToHaveAttribute("data-outcome", "done"), "%s checked out by the desk's script", p.Barcodes[0])
	if got := lib.loans(p.Card); len(got) != 1 {
		t.Fatalf("%s has %d loans after one scanned checkout under %s, want 1", p.Card, len(got), base)
	}

	// The idle end of the visit is posted by the script to its URL under the base.
	name := lib.patron(p.Card).Name()
	must(t, page.Clock().FastForward("05:10"), "five minutes and ten seconds pass")
	must(t, expect.Locator(page.Locator("#desk-patron")).Not().ToContainText(name), "the idle visit ends")
	must(t, expect.Locator(page.Locator("#scan-list")).ToContainText("ended after 5 minutes without activity"), "and the desk says why")

	must(t, navLink(page, "Check in").Click(), "clicking Check in")
	must(t, expect.Page(page).ToHaveURL(srv.BaseURL+"/checkin"), "on Check in under the base")
	s.scan(p.Barcodes[0])
	s.settle()
	must(t, expect.Locator(s.row(p.Barcodes[0])).ToHaveAttribute("data-outcome", "done"), "%s checked in by the desk's script", p.Barcodes[0])
	if got := lib.loans(p.Card); len(got) != 0 {
		t.Errorf("%s still has %v on loan after the scanned check-in", p.Card, got)
	}

	must(t, button(page, "Log out").Click(), "logging out")
	expectLoginPage(t, page)
	if !strings.HasPrefix(page.URL(), srv.BaseURL+"/login") {
		t.Errorf("after logging out: %s, want %s/login", page.URL(), srv.BaseURL)
	}
	if len(notFound) > 0 {
		t.Errorf("the browser got 404 for %v", notFound)
	}
}
