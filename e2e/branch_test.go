package e2e

import (
	"testing"

	"github.com/playwright-community/playwright-go"
)

// loginAt signs in as a person does, choosing the branch by its label in the
// Branch select.
func loginAt(t testing.TB, page playwright.Page, username, password, branch string) {
	t.Helper()
	_, err := page.GetByLabel("Branch", playwright.PageGetByLabelOptions{Exact: playwright.Bool(true)}).
		SelectOption(playwright.SelectOptionValues{Labels: &[]string{branch}})
	must(t, err, "choosing %q as the Branch", branch)
	login(t, page, username, password)
}

// TestBranchOfTheDesk: a librarian whose account is at Central signs in at
// Westside and checks in an Eastside copy, which goes in transit to Eastside;
// the next sign-in in this browser offers Westside first, and the librarian
// chooses Eastside: the header says so, checking the copy in there receives it
// ("Received from Westside") and ends its transfer, a checkout is made at
// Eastside, and a change of branch on the Change branch page is audited. Each
// new page state passes axe-core.
func TestBranchOfTheDesk(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	page := newA11yPage(t, launchBrowser(t))
	lib := openLibraryDB(t, srv)
	d := &desk{srv: srv, page: page}
	header := page.Locator("header.top .branch")

	// An Eastside copy on its shelf, of a title nobody holds.
	barcode := lib.value(`SELECT i.barcode FROM items i JOIN branches b ON b.id = i.home_branch_id
		WHERE b.code = 'EAS' AND i.status = 'available' AND i.current_branch_id = i.home_branch_id
			AND NOT EXISTS (SELECT 1 FROM holds h WHERE h.record_id = i.record_id AND h.status IN ('queued', 'in_transit', 'waiting'))
		ORDER BY i.barcode LIMIT 1`)

	_, err := page.Goto(srv.BaseURL + "/login")
	must(t, err, "opening the login page")
	branch := d.field("Branch")
	must(t, expect.Locator(branch).ToHaveValue(""), "a new browser offers the home branch first")
	checkA11y(t, page, "Log in: the Branch select")
	loginAt(t, page, "desk", "desk", "Westside (WES)")
	must(t, expect.Locator(header).ToContainText("Desk at Westside (WES)"), "the header shows Westside")

	must(t, navLink(page, "Check in").Click(), "clicking Check in")
	must(t, expect.Page(page).ToHaveURL(onCheckinPage), "on the Check in page")
	d.scan(t, "Barcode", barcode)
	row := page.Locator("table.checkin-list tbody tr").Filter(playwright.LocatorFilterOptions{HasText: barcode})
	must(t, expect.Locator(row).ToContainText("Transfer to Eastside"), "%s is sent to Eastside", barcode)
	if got := lib.value(`SELECT i.status || ' to ' || b.code FROM items i JOIN branches b ON b.id = i.transit_to_id WHERE i.barcode = ?`, barcode); got != "in_transit to EAS" {
		t.Fatalf("%s is %q after its checkin at Westside, want in transit to EAS", barcode, got)
	}
	must(t, button(page, "Log out").Click(), "clicking Log out")

	// This browser chose Westside last: the form offers it first.
	expectLoginPage(t, page)
	must(t, expect.Locator(branch).ToHaveValue("WES"), "the login form offers Westside, this browser's last choice")
	loginAt(t, page, "desk", "desk", "Eastside (EAS)")
	must(t, expect.Locator(header).ToContainText("Desk at Eastside (EAS)"), "the header shows Eastside")
	checkA11y(t, page, "Start page at Eastside")

	must(t, navLink(page, "Check in").Click(), "clicking Check in")
	must(t, expect.Page(page).ToHaveURL(onCheckinPage), "on the Check in page")
	d.scan(t, "Barcode", barcode)
	must(t, expect.Locator(row).ToContainText("Received from Westside"), "%s is received from Westside", barcode)
	must(t, expect.Locator(row).Not().ToContainText("not checked out"), "%s is not a return of an item not checked out", barcode)
	checkA11y(t, page, "Check in: received from Westside")
	if got := lib.value(`SELECT i.status || ' at ' || b.code || ', to ' || coalesce(CAST(i.transit_to_id AS TEXT), 'nowhere') FROM items i JOIN branches b ON b.id = i.current_branch_id WHERE i.barcode = ?`, barcode); got != "available at EAS, to nowhere" {
		t.Errorf("%s is %q after it was received, want available at EAS, to nowhere (the transfer over)", barcode, got)
	}
	if got := lib.value(`SELECT b.code || ' from ' || coalesce(f.code, '-') FROM checkins c JOIN branches b ON b.id = c.branch_id
			LEFT JOIN branches f ON f.id = c.received_from_id
		WHERE c.item_id = (SELECT id FROM items WHERE barcode = ?) ORDER BY c.id DESC LIMIT 1`, barcode); got != "EAS from WES" {
		t.Errorf("the checkin is %q, want at EAS from WES", got)
	}

	// A checkout at this desk is made at Eastside.
	must(t, navLink(page, "Check out").Click(), "clicking Check out")
	d.scan(t, "Card number", "P0001")
	must(t, expect.Locator(d.field("Barcode")).ToBeFocused(), "the Barcode field has focus")
	d.scan(t, "Barcode", barcode)
	loan := page.Locator("table.visit-list tbody tr").Filter(playwright.LocatorFilterOptions{HasText: barcode})
	must(t, expect.Locator(loan).ToHaveAttribute("data-outcome", "done"), "%s checked out", barcode)
	if got := lib.value(`SELECT b.code FROM loans l JOIN branches b ON b.id = l.branch_id
		WHERE l.item_id = (SELECT id FROM items WHERE barcode = ?) AND l.returned_at IS NULL`, barcode); got != "EAS" {
		t.Errorf("the loan of %s was made at %s, want EAS", barcode, got)
	}

	// Change branch, from the header.
	must(t, header.GetByRole(*playwright.AriaRoleLink, playwright.LocatorGetByRoleOptions{Name: "Change branch", Exact: playwright.Bool(true)}).Click(), "clicking Change branch")
	must(t, expect.Locator(page.GetByRole(*playwright.AriaRoleHeading, playwright.PageGetByRoleOptions{Name: "Change branch"})).ToBeVisible(), "the Change branch page")
	must(t, expect.Locator(branch).ToHaveValue("EAS"), "the page offers the branch the desk is at")
	checkA11y(t, page, "Change branch")
	_, err = branch.SelectOption(playwright.SelectOptionValues{Labels: &[]string{"Central (CEN)"}})
	must(t, err, "choosing Central")
	must(t, button(page, "Change branch").Click(), "clicking Change branch")
	must(t, expect.Locator(header).ToContainText("Desk at Central (CEN)"), "the header shows Central")
	must(t, expect.Locator(page.GetByText("You are working at Central now")).ToBeVisible(), "the change is confirmed")
	checkA11y(t, page, "Start page after Change branch")
	if got := lib.value(`SELECT detail FROM audit_log WHERE action = 'staff.branch' AND actor = 'desk' ORDER BY id DESC LIMIT 1`); got != "from Eastside (EAS) to Central (CEN)" {
		t.Errorf("the change of branch is audited as %q", got)
	}

	// Another browser signs in without choosing: the account's home branch.
	other, _ := newPage(t, launchBrowser(t))
	_, err = other.Goto(srv.BaseURL + "/login")
	must(t, err, "opening the login page in another browser")
	login(t, other, "desk", "desk")
	must(t, expect.Locator(other.Locator("header.top .branch")).ToContainText("Desk at Central (CEN)"), "the other browser works at the home branch")
}
