package e2e

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/playwright-community/playwright-go"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/catalog"
	"github.com/stacks-ils/stacks/db"
)

// copyRow is a copy as the database holds it (item type, home branch, call
// number, location, price in cents), "none" if no item has the barcode.
func (l *libraryDB) copyRow(barcode string) string {
	l.t.Helper()
	var row string
	err := l.d.Read(context.Background(), func(tx *db.Tx) error {
		err := tx.QueryRow(`SELECT it.code || ' ' || b.code || ' ' || i.call_number || ' ' || i.location || ' ' || i.price_cents
			FROM items i JOIN item_types it ON it.id = i.item_type_id JOIN branches b ON b.id = i.home_branch_id
			WHERE i.barcode = ?`, barcode).Scan(&row)
		if errors.Is(err, sql.ErrNoRows) {
			row = "none"
			return nil
		}
		return err
	})
	if err != nil {
		l.t.Fatalf("copy %s: %v", barcode, err)
	}
	return row
}

// TestAddCopiesAtScannerPace: adding copies with a barcode scanner. The form comes
// filled in as the record's newest copy; the scanner's Enter in the Barcode field
// moves on to the next field and saves nothing (with JavaScript, and without it,
// where Enter presses "Check barcode"); "Save and add another" saves and shows the
// form again, Barcode focused. Each outcome is read in the database; axe-core
// checks each state of the form.
func TestAddCopiesAtScannerPace(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	l := openLibraryDB(t, srv)
	// The record of I00001 gets a newest copy with details of its own, which
	// the form must offer for the next one.
	var recordID int64
	err := l.d.Write(context.Background(), func(tx *db.Tx) error {
		it, err := catalog.FindItemByBarcode(tx, "I00001")
		if err != nil {
			return err
		}
		recordID = it.RecordID
		_, err = catalog.AddItem(tx, stacks.Actor{Name: "e2e"}, recordID, catalog.ItemInput{Barcode: "E2E0000", ItemTypeCode: "DVD",
			HomeBranchCode: "CEN", CallNumber: "FIC AUS 2", Location: "Adult fiction", Price: "18.99"})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	const defaults = "DVD CEN FIC AUS 2 Adult fiction 1899"
	formPath := fmt.Sprintf("/records/%d/items/new", recordID)
	browser := launchBrowser(t)

	t.Run("JavaScript", func(t *testing.T) {
		page := newA11yPage(t, browser)
		// Every form post the page sends, to show that Enter sent none.
		var mu sync.Mutex
		var posts []string
		page.OnRequest(func(r playwright.Request) {
			if r.Method() == "POST" && strings.Contains(r.URL(), "/items") {
				body, _ := r.PostData()
				mu.Lock()
				posts = append(posts, body)
				mu.Unlock()
			}
		})
		_, err := page.Goto(srv.BaseURL + formPath)
		must(t, err, "opening the form")
		login(t, page, "desk", "desk")
		barcode := page.GetByLabel("Barcode", playwright.PageGetByLabelOptions{Exact: playwright.Bool(true)})
		expectForm := func(what string) {
			t.Helper()
			must(t, expect.Locator(page.GetByLabel("Item type")).ToHaveValue("DVD"), "%s: the item type", what)
			must(t, expect.Locator(page.GetByLabel("Home branch")).ToHaveValue("CEN"), "%s: the home branch", what)
			must(t, expect.Locator(page.GetByLabel("Call number")).ToHaveValue("FIC AUS 2"), "%s: the call number", what)
			must(t, expect.Locator(page.GetByLabel("Shelving location")).ToHaveValue("Adult fiction"), "%s: the shelving location", what)
			must(t, expect.Locator(page.GetByLabel("Replacement price")).ToHaveValue("18.99"), "%s: the price", what)
		}
		must(t, expect.Locator(barcode).ToBeFocused(), "the Barcode field has the focus")
		expectForm("the new form")
		checkA11y(t, page, "Add an item: filled in from the newest copy")

		// The scanner: the label's characters, then Enter.
		scanInto := func(code string) {
			t.Helper()
			kb := page.Keyboard()
			must(t, kb.Type(code, playwright.KeyboardTypeOptions{Delay: playwright.Float(4)}), "scanning %s", code)
			must(t, kb.Press("Enter"), "Enter after %s", code)
		}
		scanInto("E2E0001")
		must(t, expect.Locator(page.GetByLabel("Item type")).ToBeFocused(), "Enter moved on to Item type")
		must(t, expect.Locator(barcode).ToHaveValue("E2E0001"), "the barcode stays in its field")
		if row := l.copyRow("E2E0001"); row != "none" {
			t.Fatalf("Enter in the Barcode field saved the copy: %s", row)
		}
		must(t, button(page, "Save and add another").Click(), "Save and add another")
		must(t, expect.Locator(page.GetByText("Item E2E0001 is added")).ToBeVisible(), "the copy added")
		must(t, expect.Page(page).ToHaveURL(regexp.MustCompile(regexp.QuoteMeta(formPath)+`\?home_branch=CEN$`)), "the form again")
		must(t, expect.Locator(barcode).ToBeFocused(), "the Barcode field has the focus again")
		must(t, expect.Locator(barcode).ToHaveValue(""), "the Barcode field is empty")
		expectForm("the form again")
		checkA11y(t, page, "Add an item: after Save and add another")
		if row := l.copyRow("E2E0001"); row != defaults {
			t.Errorf("E2E0001 saved as %q, want %q", row, defaults)
		}
		mu.Lock()
		got := append([]string(nil), posts...)
		mu.Unlock()
		if len(got) != 1 || !strings.Contains(got[0], "then=another") || strings.Contains(got[0], "step=") {
			t.Errorf("the form posts %q, want only Save and add another's", got)
		}

		// The next copy: scan, then Add item.
		scanInto("E2E0002")
		must(t, expect.Locator(page.GetByLabel("Item type")).ToBeFocused(), "Enter moved on to Item type")
		must(t, button(page, "Add item").Click(), "Add item")
		must(t, expect.Locator(page.GetByText("Item E2E0002 is added")).ToBeVisible(), "the second copy added")
		if row := l.copyRow("E2E0002"); row != defaults {
			t.Errorf("E2E0002 saved as %q, want %q", row, defaults)
		}

		// Check barcode (Enter's button without JavaScript): a label in use,
		// then a free one; nothing saved.
		_, err = page.Goto(srv.BaseURL + formPath)
		must(t, err, "opening the form")
		must(t, barcode.Fill("I00001"), "typing a barcode in use")
		must(t, button(page, "Check barcode").Click(), "Check barcode")
		must(t, expect.Locator(page.Locator("#barcode-error")).ToContainText("Barcode I00001 is already used by another item"), "the barcode refused")
		checkA11y(t, page, "Add an item: barcode in use")
		must(t, barcode.Fill("E2E0003"), "typing a free barcode")
		must(t, button(page, "Check barcode").Click(), "Check barcode")
		must(t, expect.Locator(page.GetByText("No item has barcode E2E0003 yet")).ToBeVisible(), "the barcode checked")
		must(t, expect.Locator(page.GetByLabel("Item type")).ToBeFocused(), "the focus on Item type")
		checkA11y(t, page, "Add an item: barcode checked")
		if row := l.copyRow("E2E0003"); row != "none" {
			t.Fatalf("Check barcode saved the copy: %s", row)
		}
	})

	t.Run("NoJavaScript", func(t *testing.T) {
		page, _ := newPage(t, browser, playwright.BrowserNewContextOptions{JavaScriptEnabled: playwright.Bool(false)})
		_, err := page.Goto(srv.BaseURL + formPath)
		must(t, err, "opening the form")
		login(t, page, "desk", "desk")
		barcode := page.GetByLabel("Barcode", playwright.PageGetByLabelOptions{Exact: playwright.Bool(true)})
		must(t, expect.Locator(barcode).ToBeFocused(), "the Barcode field has the focus")
		kb := page.Keyboard()
		must(t, kb.Type("E2E0004", playwright.KeyboardTypeOptions{Delay: playwright.Float(4)}), "scanning E2E0004")
		must(t, kb.Press("Enter"), "Enter after E2E0004")
		must(t, expect.Locator(page.GetByText("No item has barcode E2E0004 yet")).ToBeVisible(), "Enter checked the barcode")
		must(t, expect.Locator(page.GetByLabel("Item type")).ToBeFocused(), "the focus moved on to Item type")
		must(t, expect.Locator(barcode).ToHaveValue("E2E0004"), "the barcode kept")
		if row := l.copyRow("E2E0004"); row != "none" {
			t.Fatalf("Enter in the Barcode field saved the copy: %s", row)
		}
		must(t, button(page, "Save and add another").Click(), "Save and add another")
		must(t, expect.Locator(page.GetByText("Item E2E0004 is added")).ToBeVisible(), "the copy added")
		must(t, expect.Locator(barcode).ToBeFocused(), "the Barcode field has the focus again")
		if row := l.copyRow("E2E0004"); row != defaults {
			t.Errorf("E2E0004 saved as %q, want %q", row, defaults)
		}
	})
}
