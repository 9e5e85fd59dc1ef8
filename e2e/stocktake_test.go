package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"

	"github.com/stacks-ils/stacks/db"
)

// stocktakeShelf finds, in the demo library, four items in a row on a Central
// shelf (no other item shares the first call number or starts with the last), all
// available, and one available Central item from another shelf.
func stocktakeShelf(t *testing.T, lib *libraryDB) (items []string, from, to, misplaced string) {
	t.Helper()
	err := lib.d.Read(context.Background(), func(tx *db.Tx) error {
		rows, err := tx.Query(`SELECT i.barcode, i.call_number, i.status FROM items i JOIN branches b ON b.id = i.home_branch_id
			WHERE b.code = 'CEN' AND i.call_number LIKE 'FIC %' ORDER BY i.call_number, i.barcode`)
		if err != nil {
			return err
		}
		type it struct{ barcode, call, status string }
		var all []it
		for rows.Next() {
			var x it
			if err := rows.Scan(&x.barcode, &x.call, &x.status); err != nil {
				rows.Close()
				return err
			}
			all = append(all, x)
		}
		rows.Close()
		for i := 1; i+4 < len(all) && items == nil; i++ {
			w := all[i : i+4]
			ok := all[i-1].call != w[0].call && w[0].call != w[3].call && !strings.HasPrefix(all[i+4].call, w[3].call)
			for _, x := range w {
				ok = ok && x.status == "available"
			}
			if ok {
				for _, x := range w {
					items = append(items, x.barcode)
				}
				from, to = w[0].call, w[3].call
				// An item from further along the shelves.
				for _, x := range all[i+40:] {
					if x.status == "available" && !strings.HasPrefix(x.call, to) {
						misplaced = x.barcode
						break
					}
				}
			}
		}
		return nil
	})
	if err != nil || items == nil || misplaced == "" {
		t.Fatalf("no shelf of four in the demo library: %v", err)
	}
	return items, from, to, misplaced
}

// TestStocktakeShelf: a librarian takes stock of one Central shelf of four items,
// scanning as a scanner types (keystrokes and Enter into the focused field, 100 ms
// apart, whether or not the page answered): three of the four are there, one is
// missing, and one item from another shelf was put back in the wrong place. The
// results name the missing one (never seen) and the misplaced one, and the items
// scanned have a last-seen time.
func TestStocktakeShelf(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	browser := launchBrowser(t)
	lib := openLibraryDB(t, srv)
	items, from, to, misplaced := stocktakeShelf(t, lib)
	missing := items[2]
	t.Logf("shelf %q to %q: %v; %s missing, %s misplaced", from, to, items, missing, misplaced)

	page, _ := newPage(t, browser)
	_, err := page.Goto(srv.BaseURL + "/")
	must(t, err, "opening the staff site")
	login(t, page, "desk", "desk")
	must(t, navLink(page, "Reports").Click(), "clicking Reports")
	must(t, page.GetByRole("link", playwright.PageGetByRoleOptions{Name: "Stocktake", Exact: playwright.Bool(true)}).Click(), "clicking Stocktake")
	_, err = page.GetByLabel("Branch").SelectOption(playwright.SelectOptionValues{Labels: &[]string{"Central"}})
	must(t, err, "choosing Central")
	must(t, page.GetByLabel("Call numbers from").Fill(from), "typing the start of the shelf")
	must(t, page.GetByLabel("to", playwright.PageGetByLabelOptions{Exact: playwright.Bool(true)}).Fill(to), "typing the end of the shelf")
	must(t, page.GetByRole("button", playwright.PageGetByRoleOptions{Name: "Start stocktake"}).Click(), "starting the stocktake")
	must(t, expect.Locator(page.GetByRole("heading", playwright.PageGetByRoleOptions{Level: playwright.Int(1)})).ToContainText("Stocktake: "+from+" to "+to+" at Central"), "on the scan page")

	s := &scanner{t: t, page: page, srv: srv, gap: 100 * time.Millisecond}
	s.fieldIsEmptyAndFocused("on the stocktake page")
	for _, b := range []string{items[0], items[1], misplaced, items[3]} {
		s.scan(b)
	}
	s.settle()
	for _, b := range []string{items[0], items[1], items[3]} {
		must(t, expect.Locator(s.row(b)).ToHaveAttribute("data-outcome", "done"), "%s on the right shelf", b)
		must(t, expect.Locator(s.row(b)).ToContainText("On the right shelf"), "%s said to be on the right shelf", b)
	}
	must(t, expect.Locator(s.row(misplaced)).ToHaveAttribute("data-outcome", "refused"), "%s shown as a problem", misplaced)
	must(t, expect.Locator(s.row(misplaced)).ToContainText("Wrong shelf"), "%s said to be on the wrong shelf", misplaced)
	s.fieldIsEmptyAndFocused("after the scans")

	must(t, page.GetByRole("link", playwright.PageGetByRoleOptions{Name: "See the results"}).Click(), "opening the results")
	missingSection := page.Locator("section").Filter(playwright.LocatorFilterOptions{Has: page.GetByRole("heading", playwright.PageGetByRoleOptions{Name: "Missing", Exact: playwright.Bool(true)})})
	must(t, expect.Locator(missingSection.Locator("tbody tr")).ToHaveCount(1), "one item missing")
	must(t, expect.Locator(missingSection).ToContainText(missing), "the missing item named")
	must(t, expect.Locator(missingSection).ToContainText("never"), "the missing item never seen")
	wrongSection := page.Locator("section").Filter(playwright.LocatorFilterOptions{Has: page.GetByRole("heading", playwright.PageGetByRoleOptions{Name: "On the wrong shelf"})})
	must(t, expect.Locator(wrongSection.Locator("tbody tr")).ToHaveCount(1), "one item on the wrong shelf")
	must(t, expect.Locator(wrongSection).ToContainText(misplaced), "the misplaced item named")

	err = lib.d.Read(context.Background(), func(tx *db.Tx) error {
		for _, b := range []string{items[0], items[1], items[3], misplaced, missing} {
			var seen db.NullTime
			if err := tx.QueryRow(`SELECT last_seen_at FROM items WHERE barcode = ?`, b).Scan(&seen); err != nil {
				return err
			}
			if seen.Valid == (b == missing) {
				t.Errorf("%s: last seen %v", b, seen)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestStocktakeLocation: a stocktake of a shelving location rather than a call
// number range. Four Central items are put on a small "New books" display (the
// demo's own locations hold dozens of items each: too long a scan for a browser
// test); the librarian chooses Central and that location, scans three of them
// and one Central item from Adult fiction as a scanner does, and the results
// name the one missing and the misplaced one.
func TestStocktakeLocation(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	browser := launchBrowser(t)
	lib := openLibraryDB(t, srv)
	items, _, _, misplaced := stocktakeShelf(t, lib)
	missing := items[2]
	err := lib.d.Write(context.Background(), func(tx *db.Tx) error {
		for _, b := range items {
			if _, err := tx.Exec(`UPDATE items SET location = 'New books' WHERE barcode = ?`, b); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	page, _ := newPage(t, browser)
	_, err = page.Goto(srv.BaseURL + "/")
	must(t, err, "opening the staff site")
	login(t, page, "desk", "desk")
	must(t, navLink(page, "Reports").Click(), "clicking Reports")
	must(t, page.GetByRole("link", playwright.PageGetByRoleOptions{Name: "Stocktake", Exact: playwright.Bool(true)}).Click(), "clicking Stocktake")
	_, err = page.GetByLabel("Branch").SelectOption(playwright.SelectOptionValues{Labels: &[]string{"Central"}})
	must(t, err, "choosing Central")
	_, err = page.GetByLabel("or location").SelectOption(playwright.SelectOptionValues{Values: &[]string{"New books"}})
	must(t, err, "choosing New books")
	must(t, page.GetByRole("button", playwright.PageGetByRoleOptions{Name: "Start stocktake"}).Click(), "starting the stocktake")
	must(t, expect.Locator(page.GetByRole("heading", playwright.PageGetByRoleOptions{Level: playwright.Int(1)})).ToContainText("Stocktake: New books at Central"), "on the scan page")

	s := &scanner{t: t, page: page, srv: srv, gap: 100 * time.Millisecond}
	s.fieldIsEmptyAndFocused("on the stocktake page")
	for _, b := range []string{items[0], items[1], misplaced, items[3]} {
		s.scan(b)
	}
	s.settle()
	must(t, expect.Locator(s.row(items[3])).ToHaveAttribute("data-outcome", "done"), "%s on the right shelf", items[3])
	must(t, expect.Locator(s.row(misplaced)).ToContainText("Wrong shelf: belongs at Central, Adult fiction"), "%s said to be on the wrong shelf", misplaced)

	must(t, page.GetByRole("link", playwright.PageGetByRoleOptions{Name: "See the results"}).Click(), "opening the results")
	missingSection := page.Locator("section").Filter(playwright.LocatorFilterOptions{Has: page.GetByRole("heading", playwright.PageGetByRoleOptions{Name: "Missing", Exact: playwright.Bool(true)})})
	must(t, expect.Locator(missingSection.Locator("tbody tr")).ToHaveCount(1), "one item missing")
	must(t, expect.Locator(missingSection).ToContainText(missing), "the missing item named")
	wrongSection := page.Locator("section").Filter(playwright.LocatorFilterOptions{Has: page.GetByRole("heading", playwright.PageGetByRoleOptions{Name: "On the wrong shelf"})})
	must(t, expect.Locator(wrongSection.Locator("tbody tr")).ToHaveCount(1), "one item on the wrong shelf")
	must(t, expect.Locator(wrongSection).ToContainText(misplaced), "the misplaced item named")
}
