package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/playwright-community/playwright-go"

	"github.com/stacks-ils/stacks/copycat/yaztest"
	"github.com/stacks-ils/stacks/db"
)

// stacksCheck runs `stacks check` on the server's database, live, and fails
// the test if it finds any violation.
func stacksCheck(t testing.TB, srv *server, after string) {
	t.Helper()
	out, err := exec.Command(stacksBin, "check", "--db", srv.DB).CombinedOutput()
	if err != nil {
		t.Fatalf("stacks check after %s: %v\n%s", after, err, out)
	}
}

// count runs a query of one number on the library's database.
func (l *libraryDB) count(query string, args ...any) int {
	l.t.Helper()
	var n int
	err := l.d.Read(context.Background(), func(tx *db.Tx) error {
		return tx.QueryRow(query, args...).Scan(&n)
	})
	if err != nil {
		l.t.Fatalf("%s: %v", query, err)
	}
	return n
}

// TestCataloguerFlow: a cataloguer's day with a scanner. An administrator
// lists yaz-ztest as two copy cataloguing targets (Z39.50 and SRU); the
// cataloguer scans an ISBN into the search, sees each target's answer, imports
// a record, scans two barcodes for two copies, prints their spine labels from
// the record page, imports the record again as a duplicate (the page asks
// first), withdraws a copy, merges the duplicate and moves 50 copies to
// another shelving location in one batch. `stacks check` finds the database
// sound after each step; axe-core checks every page on the way.
func TestCataloguerFlow(t *testing.T) {
	t.Parallel()
	yaz := yaztest.New(t)
	srv := startServer(t)
	l := openLibraryDB(t, srv)
	page := newA11yPage(t, launchBrowser(t))
	exact := playwright.PageGetByLabelOptions{Exact: playwright.Bool(true)}
	field := func(label string) playwright.Locator { return page.GetByLabel(label, exact) }
	choose := func(label, value string) {
		t.Helper()
		_, err := field(label).SelectOption(playwright.SelectOptionValues{Values: &[]string{value}})
		must(t, err, "choosing %s in %s", value, label)
	}
	flash := func(text, what string) {
		t.Helper()
		must(t, expect.Locator(page.Locator(".flash.ok").Filter(playwright.LocatorFilterOptions{HasText: text})).ToBeVisible(), "%s", what)
	}
	// scan sends a barcode's keys, then Enter, into the focused field.
	scan := func(code string) { t.Helper(); scanKeys(t, page, code) }

	// The targets, as an administrator adds them.
	_, err := page.Goto(srv.BaseURL + "/admin/copycat")
	must(t, err, "opening the targets page")
	login(t, page, "admin", "admin")
	must(t, expect.Page(page).ToHaveURL(srv.BaseURL+"/admin/copycat"), "on the targets page after logging in")
	checkA11y(t, page, "Copy cataloguing targets: none yet")
	for _, tg := range []struct{ name, kind, address, syntax string }{
		{"yaz Z39.50", "Z39.50", yaz.Z3950(), "MARC21"},
		{"yaz SRU", "SRU", yaz.SRU(), "MARCXML"},
	} {
		must(t, field("Name").Fill(tg.name), "naming %s", tg.name)
		must(t, page.GetByRole(*playwright.AriaRoleRadio, playwright.PageGetByRoleOptions{Name: tg.kind, Exact: playwright.Bool(true)}).Check(), "%s speaks %s", tg.name, tg.kind)
		must(t, field("Address").Fill(tg.address), "the address of %s", tg.name)
		choose("Record syntax", tg.syntax)
		must(t, field("Timeout in seconds").Fill("20"), "the timeout of %s", tg.name)
		must(t, page.GetByLabel("Enabled").Check(), "enabling %s", tg.name)
		must(t, button(page, "Add target").Click(), "adding %s", tg.name)
		must(t, expect.Locator(page.GetByRole(*playwright.AriaRoleMain)).ToContainText(tg.address), "%s listed", tg.name)
	}
	checkA11y(t, page, "Copy cataloguing targets: two")
	stacksCheck(t, srv, "adding the targets")

	// 1. The ISBN, scanned into the search's focused field; a result per
	// target; the first record of the Z39.50 target imported.
	must(t, navLink(page, "Search").Click(), "opening Search")
	must(t, page.GetByRole(*playwright.AriaRoleLink, playwright.PageGetByRoleOptions{Name: "Copy cataloguing"}).First().Click(), "opening Copy cataloguing")
	must(t, expect.Locator(field("ISBN, title or author")).ToBeFocused(), "the search field has the focus")
	checkA11y(t, page, "Copy cataloguing: the search")
	scan("0201896834")
	must(t, expect.Locator(page.GetByText("2 catalogues searched")).ToBeVisible(), "both targets searched")
	targets := page.Locator("section.copycat-target")
	must(t, expect.Locator(targets).ToHaveCount(2), "a section per target")
	target := func(name string) playwright.Locator {
		return page.GetByRole(*playwright.AriaRoleRegion, playwright.PageGetByRoleOptions{Name: name, Exact: playwright.Bool(true)})
	}
	for _, name := range []string{"yaz Z39.50", "yaz SRU"} {
		must(t, expect.Locator(target(name)).ToContainText("How to program a computer"), "%s found the record", name)
	}
	checkA11y(t, page, "Copy cataloguing: the results")
	must(t, target("yaz Z39.50").GetByRole(*playwright.AriaRoleButton, playwright.LocatorGetByRoleOptions{Name: "Import"}).First().Click(), "importing the first record")
	must(t, expect.Page(page).ToHaveURL(regexp.MustCompile(`/records/\d+/items/new$`)), "the item form after the import")
	flash("is imported from yaz Z39.50 as a new record", "the import said")
	recordID := regexp.MustCompile(`/records/(\d+)/`).FindStringSubmatch(page.URL())[1]
	checkA11y(t, page, "Add an item: after the import")
	stacksCheck(t, srv, "the import")

	// 2. Two copies: a scan each; the scanner's Enter moves on, "Save and
	// add another" saves the first and brings the form back for the second.
	barcode := field("Barcode")
	must(t, expect.Locator(barcode).ToBeFocused(), "the Barcode field has the focus")
	scan("CAT0001")
	must(t, expect.Locator(field("Item type")).ToBeFocused(), "Enter moved on to Item type")
	choose("Item type", "BOOK")
	choose("Home branch", "CEN")
	must(t, field("Call number").Fill("005.1 HOW"), "the call number")
	must(t, field("Shelving location").Fill("Adult non-fiction"), "the shelving location")
	must(t, button(page, "Save and add another").Click(), "Save and add another")
	flash("Item CAT0001 is added", "the first copy added")
	must(t, expect.Locator(barcode).ToBeFocused(), "the Barcode field has the focus again")
	must(t, expect.Locator(field("Call number")).ToHaveValue("005.1 HOW"), "the form offers the first copy's call number")
	checkA11y(t, page, "Add an item: the second copy")
	scan("CAT0002")
	must(t, expect.Locator(field("Item type")).ToBeFocused(), "Enter moved on to Item type")
	must(t, button(page, "Add item").Click(), "Add item")
	flash("Item CAT0002 is added", "the second copy added")
	if n := l.count(`SELECT COUNT(*) FROM items WHERE record_id = ? AND barcode IN ('CAT0001', 'CAT0002') AND call_number = '005.1 HOW'`, recordID); n != 2 {
		t.Fatalf("the record has %d of the two copies scanned", n)
	}
	stacksCheck(t, srv, "adding two copies")

	// 3. Spine labels for the two, ticked on the record page.
	recordPath := "/records/" + recordID
	_, err = page.Goto(srv.BaseURL + recordPath)
	must(t, err, "opening the record")
	checkA11y(t, page, "The imported record")
	for _, b := range []string{"CAT0001", "CAT0002"} {
		must(t, page.GetByRole(*playwright.AriaRoleCheckbox, playwright.PageGetByRoleOptions{Name: "Spine label for " + b}).Check(), "ticking %s", b)
	}
	must(t, button(page, "Spine labels for the items ticked").Click(), "opening the labels")
	must(t, expect.Locator(field("Barcodes or card numbers, one a line")).ToHaveValue("CAT0001\nCAT0002"), "the labels form has the two copies")
	checkA11y(t, page, "Labels: from the record page")
	must(t, button(page, "Preview").Click(), "previewing the labels")
	pdfLink := page.GetByRole(*playwright.AriaRoleLink, playwright.PageGetByRoleOptions{Name: "Download PDF"})
	must(t, expect.Locator(pdfLink).ToBeVisible(), "the preview links its PDF")
	checkA11y(t, page, "Labels: the preview")
	href, err := pdfLink.GetAttribute("href")
	must(t, err, "reading the PDF's address")
	resp, err := page.Request().Get(srv.BaseURL + strings.TrimPrefix(href, srv.BaseURL))
	must(t, err, "fetching the PDF")
	if resp.Status() != http.StatusOK || resp.Headers()["content-type"] != "application/pdf" {
		t.Fatalf("the labels' PDF answers %d %q, want 200 application/pdf", resp.Status(), resp.Headers()["content-type"])
	}
	stacksCheck(t, srv, "printing the labels")

	// The same record imported again: the page asks, and the cataloguer
	// adds it anyway, making the duplicate to merge.
	must(t, navLink(page, "Search").Click(), "opening Search")
	must(t, page.GetByRole(*playwright.AriaRoleLink, playwright.PageGetByRoleOptions{Name: "Copy cataloguing"}).First().Click(), "opening Copy cataloguing")
	must(t, expect.Locator(field("ISBN, title or author")).ToBeFocused(), "the search field has the focus")
	scan("0201896834")
	must(t, target("yaz Z39.50").GetByRole(*playwright.AriaRoleButton, playwright.LocatorGetByRoleOptions{Name: "Import"}).First().Click(), "importing it again")
	must(t, expect.Locator(page.GetByRole(*playwright.AriaRoleHeading, playwright.PageGetByRoleOptions{Name: "Record already in the catalogue?"})).ToBeVisible(), "asked before importing twice")
	must(t, expect.Locator(button(page, "Overlay record "+recordID)).ToBeVisible(), "offered to overlay the record")
	checkA11y(t, page, "Copy cataloguing: the record matches")
	must(t, button(page, "Add as a new record anyway").Click(), "adding it anyway")
	must(t, expect.Page(page).ToHaveURL(regexp.MustCompile(`/records/\d+/items/new$`)), "the item form of the duplicate")
	dupID := regexp.MustCompile(`/records/(\d+)/`).FindStringSubmatch(page.URL())[1]
	if dupID == recordID {
		t.Fatalf("adding anyway overlaid record %s", recordID)
	}
	must(t, expect.Locator(barcode).ToBeFocused(), "the Barcode field has the focus")
	scan("CAT0003")
	must(t, expect.Locator(field("Item type")).ToBeFocused(), "Enter moved on to Item type")
	must(t, button(page, "Add item").Click(), "adding a copy to the duplicate")
	flash("Item CAT0003 is added", "the duplicate's copy added")
	stacksCheck(t, srv, "importing a duplicate")

	// 4. A copy withdrawn, with its reason.
	_, err = page.Goto(srv.BaseURL + recordPath)
	must(t, err, "opening the record")
	must(t, page.GetByRole(*playwright.AriaRoleLink, playwright.PageGetByRoleOptions{Name: "Withdraw item CAT0002"}).Click(), "Withdraw CAT0002")
	must(t, expect.Locator(field("Reason")).ToBeFocused(), "the reason has the focus")
	checkA11y(t, page, "Withdraw an item")
	must(t, field("Reason").Fill("Water damaged"), "the reason")
	must(t, button(page, "Withdraw CAT0002").Click(), "withdrawing CAT0002")
	must(t, expect.Locator(page.Locator(".flash.ok")).ToContainText("CAT0002"), "the withdrawal said")
	if n := l.count(`SELECT COUNT(*) FROM items WHERE barcode = 'CAT0002' AND status = 'withdrawn' AND withdrawn_reason = 'Water damaged'`); n != 1 {
		t.Fatalf("CAT0002 is %s after its withdrawal, its reason not kept", l.itemStatus("CAT0002"))
	}
	checkA11y(t, page, "After a withdrawal")
	stacksCheck(t, srv, "withdrawing a copy")

	// The duplicate merged into the record.
	_, err = page.Goto(srv.BaseURL + recordPath)
	must(t, err, "opening the record")
	must(t, page.GetByRole(*playwright.AriaRoleLink, playwright.PageGetByRoleOptions{Name: "Merge a duplicate"}).Click(), "Merge a duplicate")
	checkA11y(t, page, "Merge: naming the duplicate")
	must(t, field("Record number of the duplicate").Fill(dupID), "naming the duplicate")
	must(t, button(page, "Show the merge").Click(), "Show the merge")
	merge := button(page, fmt.Sprintf("Merge record %s into record %s", dupID, recordID))
	must(t, expect.Locator(merge).ToBeVisible(), "the merge previewed")
	checkA11y(t, page, "Merge: the preview")
	must(t, merge.Click(), "merging")
	must(t, expect.Page(page).ToHaveURL(srv.BaseURL+recordPath), "back on the kept record")
	must(t, expect.Locator(page.Locator("table.items")).ToContainText("CAT0003"), "the duplicate's copy moved to the kept record")
	checkA11y(t, page, "After the merge")
	if n := l.count(`SELECT COUNT(*) FROM records WHERE id = ?`, dupID); n != 0 {
		t.Fatalf("the duplicate %s is still in the catalogue", dupID)
	}
	stacksCheck(t, srv, "merging the duplicate")

	// 5. 50 of the demo library's copies moved to another shelving location.
	var codes []string
	err = l.d.Read(context.Background(), func(tx *db.Tx) error {
		rows, err := tx.Query(`SELECT barcode FROM items WHERE status = 'available' AND barcode NOT LIKE 'CAT%' ORDER BY barcode LIMIT 50`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var b string
			if err := rows.Scan(&b); err != nil {
				return err
			}
			codes = append(codes, b)
		}
		return rows.Err()
	})
	if err != nil || len(codes) != 50 {
		t.Fatalf("50 copies of the demo library: %d, %v", len(codes), err)
	}
	_, err = page.Goto(srv.BaseURL + "/items/batch")
	must(t, err, "opening the batch edit")
	checkA11y(t, page, "Batch edit: the form")
	must(t, field("Barcodes").Fill(strings.Join(codes, "\n")), "pasting 50 barcodes")
	choose("Change", "location")
	must(t, field("New value").Fill("Stack room"), "the new location")
	must(t, button(page, "Preview").Click(), "previewing the batch")
	apply := button(page, "Apply to 50 items")
	must(t, expect.Locator(apply).ToBeVisible(), "the preview counts 50 items")
	checkA11y(t, page, "Batch edit: the preview")
	must(t, apply.Click(), "applying the batch")
	must(t, expect.Locator(page.Locator(".flash.ok")).ToBeVisible(), "the batch said")
	checkA11y(t, page, "Batch edit: applied")
	args := []any{}
	marks := make([]string, len(codes))
	for i, c := range codes {
		args, marks[i] = append(args, c), "?"
	}
	if n := l.count(`SELECT COUNT(*) FROM items WHERE location = 'Stack room' AND barcode IN (`+strings.Join(marks, ",")+`)`, args...); n != 50 {
		t.Fatalf("%d of the 50 copies are in the Stack room", n)
	}
	stacksCheck(t, srv, "the batch move")
}
