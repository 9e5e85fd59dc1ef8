package e2e

import (
	"net/url"
	"testing"

	"github.com/playwright-community/playwright-go"
)

// TestPatronSearchWays: on the Patrons page, staff find a patron by "Surname,
// First", by a phone number written as the caller says it, by e-mail address and
// by part of the card number; each search lists the patron the database has under
// that card. axe-core checks a list found by phone number.
func TestPatronSearchWays(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	l := openLibraryDB(t, srv)
	browser := launchBrowser(t)
	page := newA11yPage(t, browser)
	_, err := page.Goto(srv.BaseURL + "/patrons")
	must(t, err, "opening Patrons")
	login(t, page, "desk", "desk")
	field := page.GetByLabel("Search patrons", playwright.PageGetByLabelOptions{Exact: playwright.Bool(true)})
	must(t, expect.Locator(field).ToBeVisible(), "the Patrons page")
	for _, tc := range []struct{ name, q, card string }{
		{"SurnameCommaFirst", "Reader, Alex", "P0001"},
		{"Phone", "(555) 01-03", "P0003"},
		{"PhoneDigits", "5550102", "P0002"},
		{"Email", "Casey.Waiting@example.org", "P0003"},
		{"CardPart", "0005", "P0005"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := l.patron(tc.card).SortName()
			must(t, field.Fill(tc.q), "typing %q", tc.q)
			must(t, field.Press("Enter"), "searching")
			must(t, expect.Page(page).ToHaveURL(srv.BaseURL+"/patrons?q="+url.QueryEscape(tc.q)), "the search for %q", tc.q)
			must(t, expect.Locator(page.GetByRole(*playwright.AriaRoleLink, playwright.PageGetByRoleOptions{Name: name, Exact: playwright.Bool(true)})).ToBeVisible(),
				"%s (%s) among the results for %q", name, tc.card, tc.q)
			if tc.name == "Phone" {
				checkA11y(t, page, "Patrons: found by phone number")
			}
			field = page.GetByLabel("Search patrons", playwright.PageGetByLabelOptions{Exact: playwright.Bool(true)})
		})
	}
}
