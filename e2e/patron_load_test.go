package e2e

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/playwright-community/playwright-go"

	"github.com/stacks-ils/stacks/db"
)

// TestPatronLoadProgress: an administrator imports a file of patrons with
// more PINs than one request hashes (100, at the real bcrypt cost). The post
// answers with a progress page, without waiting for the PINs; the page reloads
// itself (no script needed) until it shows the result; axe-core finds nothing
// on either. The patrons are in the database with their PINs.
func TestPatronLoadProgress(t *testing.T) {
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

	var csv strings.Builder
	csv.WriteString("cardnumber,surname,firstname,categorycode,branchcode,pin\n")
	const n = 100
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&csv, "L%04d,Loader,Pupil %d,CHILD,CEN,%04d\n", i, i, 2000+i)
	}
	a.open("/admin/patrons/import")
	must(t, a.field("CSV file of patrons").SetInputFiles([]playwright.InputFile{{Name: "pupils.csv", MimeType: "text/csv", Buffer: []byte(csv.String())}}), "choosing the file")
	a.click("Import")

	// 100 PINs at bcrypt's default cost take seconds on the pool's one slot:
	// the progress page is there long before they are done.
	must(t, expect.Page(page).ToHaveURL(regexp.MustCompile(regexp.QuoteMeta(srv.BaseURL)+`/admin/patrons/import/[0-9a-f]{32}$`)), "on the progress page")
	must(t, expect.Locator(page.GetByRole(*playwright.AriaRoleHeading, playwright.PageGetByRoleOptions{Name: "Importing pupils.csv"})).ToBeVisible(), "the progress page's heading")
	must(t, expect.Locator(page.GetByRole(*playwright.AriaRoleProgressbar)).ToBeVisible(), "the progress bar")
	a.check("Import patrons: in progress")

	// The browser reloads the page until the load ends.
	must(t, expect.Locator(page.GetByRole(*playwright.AriaRoleHeading, playwright.PageGetByRoleOptions{Name: "Imported pupils.csv"})).
		ToBeVisible(playwright.LocatorAssertionsToBeVisibleOptions{Timeout: playwright.Float(120_000)}), "the result, after the page reloaded itself")
	must(t, expect.Locator(page.Locator("dl.facts")).ToContainText("Created"+fmt.Sprint(n)), "the count of patrons created")
	a.check("Import patrons: done in the background")

	d, err := db.Open(srv.DB, db.Options{ReadConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var got int
	if err := d.Read(context.Background(), func(tx *db.Tx) error {
		return tx.QueryRow(`SELECT count(*) FROM patrons WHERE card LIKE 'L%' AND surname = 'Loader' AND pin_hash LIKE '$2%'`).Scan(&got)
	}); err != nil {
		t.Fatal(err)
	}
	if got != n {
		t.Errorf("%d patrons with a PIN hash, want %d", got, n)
	}
}
