package e2e

import (
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/playwright-community/playwright-go"
)

// TestLoginOpenRedirect follows crafted /login?next=... links in a real browser.
// Their targets are paths to Go, but not to a browser, which drops tabs and line
// breaks anywhere in a URL and reads a backslash as a slash: "/\t/evil.example" is
// "//evil.example", another site. Whatever the link, the browser must end on this
// site's home page and never ask another site for anything, both when it signs in
// through the link (the login form's redirect) and when, already signed in, it
// opens the link (the login page sends it straight on, with no form involved, so
// the CSP's form-action cannot help). A plain path is still followed.
func TestLoginOpenRedirect(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	browser := launchBrowser(t)
	home := regexp.MustCompile("^" + regexp.QuoteMeta(srv.BaseURL) + "/$")
	cases := []struct{ name, next string }{
		{"Tab", "/\t/evil.example"},
		{"CarriageReturn", "/\r/evil.example"},
		{"TabBackslash", "/\t\\evil.example"},
		{"Backslash", "/\\evil.example"},
		{"DoubleSlash", "//evil.example"},
	}

	// watch records every request the page makes to another site (there is no
	// evil.example to reach: such a request fails, which does not matter) and
	// every request that fails, and reports them.
	watch := func(t *testing.T, page playwright.Page) func(when, next string) {
		var mu sync.Mutex
		var elsewhere, failed []string
		page.OnRequest(func(r playwright.Request) {
			if !strings.HasPrefix(r.URL(), srv.BaseURL+"/") {
				mu.Lock()
				elsewhere = append(elsewhere, r.Method()+" "+r.URL())
				mu.Unlock()
			}
		})
		page.OnRequestFailed(func(r playwright.Request) {
			mu.Lock()
			failed = append(failed, r.Method()+" "+r.URL()+": "+r.Failure().Error())
			mu.Unlock()
		})
		return func(when, next string) {
			t.Helper()
			mu.Lock()
			defer mu.Unlock()
			if len(elsewhere) > 0 {
				t.Errorf("%s through next=%q, the browser went to another site: %q", when, next, elsewhere)
			}
			if len(failed) > 0 {
				// Chromium aborts a form post that is redirected off the site (the
				// CSP's form-action 'self'): the server sent it there.
				t.Errorf("%s through next=%q, requests failed (a redirect off the site?): %q", when, next, failed)
			}
			elsewhere, failed = nil, nil
		}
	}

	t.Run("SignIn", func(t *testing.T) {
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				page, _ := newPage(t, browser)
				check := watch(t, page)
				link := srv.BaseURL + "/login?next=" + url.QueryEscape(tc.next)
				_, err := page.Goto(link)
				must(t, err, "opening %s", link)
				expectLoginPage(t, page)
				login(t, page, "desk", "desk")
				err = expect.Page(page).ToHaveURL(home)
				check("signing in", tc.next)
				must(t, err, "after signing in through next=%q, the browser is not on this site's home page", tc.next)
				must(t, expect.Locator(page.GetByText("Morgan Desk").First()).ToBeVisible(), "the staff user's name after signing in")
			})
		}
	})

	t.Run("SignedIn", func(t *testing.T) {
		signIn, bctx := newPage(t, browser)
		_, err := signIn.Goto(srv.BaseURL + "/login")
		must(t, err, "opening /login")
		login(t, signIn, "desk", "desk")
		must(t, expect.Page(signIn).ToHaveURL(home), "signing in")
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				// A page of its own in the signed-in context, so that one case's
				// failure does not leave the next on an error page.
				page, err := bctx.NewPage()
				must(t, err, "new page")
				defer page.Close()
				check := watch(t, page)
				link := srv.BaseURL + "/login?next=" + url.QueryEscape(tc.next)
				_, err = page.Goto(link)
				check("signed in, opening the link", tc.next)
				must(t, err, "opening %s", link)
				must(t, expect.Page(page).ToHaveURL(home), "signed in, the link with next=%q did not end on this site's home page", tc.next)
			})
		}
	})

	t.Run("PlainPathFollowed", func(t *testing.T) {
		page, _ := newPage(t, browser)
		_, err := page.Goto(srv.BaseURL + "/login?next=" + url.QueryEscape("/patrons?q=Ann"))
		must(t, err, "opening the login link")
		login(t, page, "desk", "desk")
		must(t, expect.Page(page).ToHaveURL(srv.BaseURL+"/patrons?q=Ann"), "signing in did not go on to the page asked for")
	})
}
