package e2e

import (
	"strings"
	"testing"

	"github.com/playwright-community/playwright-go"
)

// TestReportsAccessibility runs axe-core on the reports' pages, as staff reach
// them: the reports (a chart and a table), the stocktake, labels and their
// preview, the history pages, and an administrator's SQL reports.
func TestReportsAccessibility(t *testing.T) {
	t.Parallel()
	if _, err := axeSource(); err != nil {
		t.Fatal(err)
	}
	srv := startServer(t)
	browser := launchBrowser(t)
	page := newA11yPage(t, browser)
	a := &a11yWalk{t: t, srv: srv, page: page}
	a.open("/login")
	login(t, page, "admin", "admin")
	must(t, expect.Locator(button(page, "Log out")).ToBeVisible(), "signed in")

	a.nav("Reports")
	a.check("Reports")
	for _, name := range []string{"Circulation", "Overdue items", "Collection size"} {
		a.nav("Reports")
		must(t, a.link(name).Click(), "opening %s", name)
		must(t, expect.Locator(page.Locator("main table")).ToBeVisible(), "%s has its table", name)
		a.check("Report: " + name)
	}
	a.open("/reports/circulation?from=31/12/2026")
	a.check("Report: a bad date")

	a.nav("Reports")
	must(t, a.link("Stocktake").Click(), "opening Stocktake")
	a.check("Stocktake")
	must(t, a.field("Call numbers from").Fill("FIC A"), "typing a shelf")
	a.click("Start stocktake")
	a.scan("Barcode", "I00001")
	a.check("Stocktake: scanning")
	must(t, a.link("See the results").Click(), "opening the results")
	a.check("Stocktake: results")

	a.nav("Reports")
	must(t, a.link("Labels").Click(), "opening Labels")
	a.check("Labels")
	must(t, a.field("Barcodes or card numbers, one a line").Fill("I00001\nI00010"), "listing barcodes")
	_, err := page.GetByLabel("Print", playwright.PageGetByLabelOptions{Exact: playwright.Bool(true)}).SelectOption(playwright.SelectOptionValues{Values: &[]string{"code128"}})
	must(t, err, "choosing Code 128")
	a.click("Preview")
	must(t, expect.Locator(page.Locator("svg.label-page")).ToHaveCount(1), "one sheet previewed")
	a.check("Labels: preview")

	a.nav("Search")
	a.scan("Search", "left hand of darkness")
	must(t, a.link("The Left Hand of Darkness").Click(), "opening the record")
	must(t, page.GetByRole(*playwright.AriaRoleLink, playwright.PageGetByRoleOptions{Name: "History of item I00010"}).Click(), "opening the item's history")
	a.check("Item history")

	a.nav("Administration")
	must(t, page.Locator("main").GetByRole(*playwright.AriaRoleLink, playwright.LocatorGetByRoleOptions{Name: "SQL reports", Exact: playwright.Bool(true)}).Click(), "opening SQL reports")
	a.check("SQL reports")
	must(t, a.field("Name").Fill("Items by status"), "naming a report")
	must(t, a.field("SQL").Fill("SELECT status, count(*) FROM items WHERE home_branch_id = :branch GROUP BY status"), "typing its SQL")
	a.click("Save report")
	must(t, a.field("branch").Fill("1"), "the parameter")
	a.click("Run report")
	must(t, expect.Locator(page.Locator("main table")).ToBeVisible(), "the report's rows")
	a.check("SQL report: run")
	// Its CSV is the answer to the result's own form (a post, as the run is).
	dl, err := page.ExpectDownload(func() error { return button(page, "Download CSV").Click() })
	must(t, err, "downloading the CSV")
	if name := dl.SuggestedFilename(); !strings.HasPrefix(name, "sql-report-") || !strings.HasSuffix(name, ".csv") {
		t.Errorf("the CSV's name: %q", name)
	}

	// A link on another site to a report: the browser says so (Sec-Fetch-Site:
	// cross-site), and Stacks shows why it did not run it, with a link to run it
	// from here.
	const elsewhere = "http://elsewhere.test/"
	must(t, page.Route(elsewhere, func(r playwright.Route) {
		_ = r.Fulfill(playwright.RouteFulfillOptions{Status: playwright.Int(200), ContentType: playwright.String("text/html"),
			Body: `<!doctype html><html lang="en"><title>Elsewhere</title><a href="` + srv.BaseURL + `/reports/overdue?branch=">The overdue report</a></html>`})
	}), "serving the other site")
	_, err = page.Goto(elsewhere)
	must(t, err, "opening the other site")
	must(t, a.link("The overdue report").Click(), "following its link")
	must(t, expect.Locator(page.GetByRole(*playwright.AriaRoleHeading, playwright.PageGetByRoleOptions{Name: "Opened from another site"})).ToBeVisible(), "the refusal")
	must(t, expect.Locator(page.Locator("main table")).ToHaveCount(0), "no report run")
	a.check("Report opened from another site")
	must(t, a.link("Open /reports/overdue?branch=").Click(), "opening it from here")
	must(t, expect.Locator(page.Locator("main table")).ToBeVisible(), "the report, run")
}
