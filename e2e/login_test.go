package e2e

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/playwright-community/playwright-go"
)

// onLoginPage matches the login page's URL, with or without ?next=.
var onLoginPage = regexp.MustCompile(`/login(\?.*)?$`)

// staffNav is the navigation every signed-in staff page shows.
var staffNav = []string{"Check out", "Check in", "Patrons", "Search", "Holds"}

// TestLogin is step 1 of the desk session: a librarian opens the staff site,
// is sent to the login page, logs in as desk/desk, sees their name, the
// navigation and a "Log out" control, and logs out again.
func TestLogin(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	browser := launchBrowser(t)

	t.Run("OK", func(t *testing.T) {
		page, _ := newPage(t, browser)

		_, err := page.Goto(srv.BaseURL + "/")
		must(t, err, "opening %s/", srv.BaseURL)
		expectLoginPage(t, page)

		login(t, page, "desk", "desk")

		must(t, expect.Page(page).Not().ToHaveURL(onLoginPage), "after logging in, still on the login page")
		must(t, expect.Locator(page.GetByText("Morgan Desk").First()).ToBeVisible(), "the staff user's name %q", "Morgan Desk")
		must(t, expect.Locator(button(page, "Log out")).ToBeVisible(), "a %q button", "Log out")
		for _, name := range staffNav {
			must(t, expect.Locator(navLink(page, name)).ToBeVisible(), "link %q in the navigation (<nav>)", name)
		}

		must(t, button(page, "Log out").Click(), "clicking %q", "Log out")
		expectLoginPage(t, page)
		must(t, expect.Locator(page.GetByText("Morgan Desk")).Not().ToBeAttached(), "after logging out, the staff user's name is still shown")

		// The session is gone, not just the page: a staff page asks to log in.
		_, err = page.Goto(srv.BaseURL + "/checkout")
		must(t, err, "opening /checkout after logging out")
		expectLoginPage(t, page)
	})

	t.Run("ErrWrongPassword", func(t *testing.T) {
		page, _ := newPage(t, browser)

		_, err := page.Goto(srv.BaseURL + "/login")
		must(t, err, "opening /login")
		expectLoginPage(t, page)

		login(t, page, "desk", "not-the-password")

		must(t, expect.Locator(page.GetByText("not right")).ToBeVisible(), "an error message containing %q", "not right")
		expectLoginPage(t, page)
		must(t, expect.Locator(button(page, "Log out")).Not().ToBeAttached(), "a %q button after a failed login", "Log out")
	})
}

// TestSignedOutRedirect checks the redirect itself, which a browser hides:
// a staff page asked for without a session answers 303 to the login page and
// says where to come back to.
func TestSignedOutRedirect(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	client := httpClient()

	for _, path := range []string{"/checkout", "/checkin", "/patrons", "/search", "/holds"} {
		t.Run(strings.TrimPrefix(path, "/"), func(t *testing.T) {
			resp, err := client.Get(srv.BaseURL + path)
			if err != nil {
				t.Fatalf("GET %s: %v", path, err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusSeeOther {
				t.Fatalf("GET %s signed out: status %s, want 303 See Other", path, resp.Status)
			}
			loc, err := url.Parse(resp.Header.Get("Location"))
			if err != nil {
				t.Fatalf("GET %s: bad Location %q: %v", path, resp.Header.Get("Location"), err)
			}
			if loc.Path != "/login" || loc.Query().Get("next") != path {
				t.Errorf("GET %s signed out: Location %q, want /login?next=%s", path, resp.Header.Get("Location"), url.QueryEscape(path))
			}
		})
	}
}

// login fills in the login form as a person would and submits it.
func login(t testing.TB, page playwright.Page, username, password string) {
	t.Helper()
	must(t, page.GetByLabel("Username", playwright.PageGetByLabelOptions{Exact: playwright.Bool(true)}).Fill(username), "filling %q", "Username")
	must(t, page.GetByLabel("Password", playwright.PageGetByLabelOptions{Exact: playwright.Bool(true)}).Fill(password), "filling %q", "Password")
	must(t, button(page, "Log in").Click(), "clicking %q", "Log in")
}

// expectLoginPage asserts that the page is the login page: its URL, its
// fields and its "Log in" button.
func expectLoginPage(t testing.TB, page playwright.Page) {
	t.Helper()
	must(t, expect.Page(page).ToHaveURL(onLoginPage), "expected the login page")
	must(t, expect.Locator(button(page, "Log in")).ToBeVisible(), "the login page's %q button", "Log in")
	must(t, expect.Locator(page.GetByLabel("Username", playwright.PageGetByLabelOptions{Exact: playwright.Bool(true)})).ToBeVisible(), "the login page's %q field", "Username")
	must(t, expect.Locator(page.GetByLabel("Password", playwright.PageGetByLabelOptions{Exact: playwright.Bool(true)})).ToBeVisible(), "the login page's %q field", "Password")
}

// button finds a button by its exact accessible name.
func button(page playwright.Page, name string) playwright.Locator {
	return page.GetByRole(*playwright.AriaRoleButton, playwright.PageGetByRoleOptions{Name: name, Exact: playwright.Bool(true)})
}

// navLink finds a link by its exact accessible name inside the page's
// navigation landmark, so that a page repeating a link in its body does not
// count as navigation.
func navLink(page playwright.Page, name string) playwright.Locator {
	return page.GetByRole(*playwright.AriaRoleNavigation).
		GetByRole(*playwright.AriaRoleLink, playwright.LocatorGetByRoleOptions{Name: name, Exact: playwright.Bool(true)})
}
