package e2e

import (
	"testing"

	"github.com/playwright-community/playwright-go"
)

// TestSIPAdmin: an administrator adds a SIP account for a sorter in the browser,
// from the administration index, and turns its checked_in_ok setting on.
func TestSIPAdmin(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	page, _ := newPage(t, launchBrowser(t))
	exact := playwright.PageGetByLabelOptions{Exact: playwright.Bool(true)}

	_, err := page.Goto(srv.BaseURL + "/admin")
	must(t, err, "opening /admin")
	login(t, page, "admin", "admin")
	must(t, page.GetByRole(*playwright.AriaRoleLink, playwright.PageGetByRoleOptions{Name: "SIP accounts", Exact: playwright.Bool(true)}).Click(), "clicking %q", "SIP accounts")
	must(t, expect.Locator(page.GetByRole(*playwright.AriaRoleLink, playwright.PageGetByRoleOptions{Name: "kiosk", Exact: playwright.Bool(true)})).ToBeVisible(), "the demo's kiosk account")

	must(t, page.GetByLabel("Username", exact).Fill("sorter1"), "filling %q", "Username")
	must(t, page.GetByLabel("Password", exact).Fill("bins-please"), "filling %q", "Password")
	must(t, page.GetByLabel("Institution ID", exact).Fill("CEN"), "filling %q", "Institution ID")
	_, err = page.GetByLabel("Branch", exact).SelectOption(playwright.SelectOptionValues{Labels: &[]string{"Eastside"}})
	must(t, err, "choosing the branch %q", "Eastside")
	must(t, button(page, "Add account").Click(), "clicking %q", "Add account")
	must(t, expect.Locator(page.GetByText("SIP account sorter1 created for institution CEN at Eastside.")).ToBeVisible(), "the message that sorter1 was created")

	must(t, page.GetByRole(*playwright.AriaRoleLink, playwright.PageGetByRoleOptions{Name: "sorter1", Exact: playwright.Bool(true)}).Click(), "clicking %q", "sorter1")
	checkedInOK := page.GetByLabel("checked_in_ok", exact)
	must(t, expect.Locator(checkedInOK).Not().ToBeChecked(), "checked_in_ok off for a new account")
	must(t, checkedInOK.Check(), "checking %q", "checked_in_ok")
	must(t, button(page, "Save settings").Click(), "clicking %q", "Save settings")
	must(t, expect.Locator(page.GetByText("Settings of sorter1 saved.")).ToBeVisible(), "the message that the settings were saved")
	must(t, expect.Locator(page.GetByLabel("checked_in_ok", exact)).ToBeChecked(), "checked_in_ok on after saving")

	must(t, page.GetByRole(*playwright.AriaRoleLink, playwright.PageGetByRoleOptions{Name: "SIP accounts", Exact: playwright.Bool(true)}).Click(), "clicking %q", "SIP accounts")
	must(t, expect.Locator(page.GetByRole(*playwright.AriaRoleRow).Filter(playwright.LocatorFilterOptions{HasText: "sorter1"})).ToContainText("checked_in_ok"), "the list's summary of sorter1's settings")
}
