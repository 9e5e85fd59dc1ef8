package e2e

import (
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"
)

// pressSlowly presses each key of text, then Enter, pause apart, as a person
// types.
func pressSlowly(t *testing.T, page playwright.Page, text string, pause time.Duration) {
	t.Helper()
	for _, c := range text {
		must(t, page.Keyboard().Press(string(c)), "typing %q", text)
		time.Sleep(pause) // a person's pace between keys, under test
	}
	must(t, page.Keyboard().Press("Enter"), "Enter after %q", text)
}

// TestScannerKeys: what a person does with the keyboard on a desk page keeps its
// meaning beside a scanner's keys. Tab then Enter or Space on Confirm confirms;
// typing into another text field stays there, and a scan into it goes to the
// queue; the workstation's scanner key gap separates the two, tested on both
// sides of it; Stocktake takes a scan with the focus on a link.
func TestScannerKeys(t *testing.T) {
	// Not parallel: its subtests tell a scan from a person by the gaps between
	// keys (60 ms against a 200 ms gap), and a test beside it in the same
	// Chromium can delay a key past the gap, as it did twice under make test.
	browser := launchBrowser(t)
	srv, lib, take := scannerLibrary(t)
	page := newA11yPage(t, browser)
	_, err := page.Goto(srv.BaseURL + "/checkout")
	must(t, err, "opening the staff site")
	login(t, page, "desk", "desk")
	must(t, expect.Page(page).ToHaveURL(srv.BaseURL+"/checkout"), "on Check out after logging in")
	s := &scanner{t: t, page: page, srv: srv, gap: 100 * time.Millisecond}
	decision := page.Locator(`#scan-list tr[data-outcome="decision"]`)
	confirm := decision.GetByRole(*playwright.AriaRoleButton, playwright.LocatorGetByRoleOptions{Name: "Confirm checkout"})
	// ask starts a visit of a patron over the fines limit and scans an item: the
	// desk asks to confirm.
	ask := func(t *testing.T, card, barcode string) {
		t.Helper()
		s.t = t
		lib.owe(card)
		s.scan(card)
		s.scan(barcode)
		must(t, expect.Locator(decision).ToHaveAttribute("data-scan", barcode), "%s asks to confirm the fines", barcode)
	}

	for _, key := range []string{"Enter", "Space"} {
		t.Run("Tab"+key+"Confirms", func(t *testing.T) {
			p := take()
			ask(t, p.Card, p.Barcodes[0])
			before := lib.overrides()
			tabTo(t, page, confirm, "Confirm checkout")
			must(t, page.Keyboard().Press(key), "pressing %s on Confirm checkout", key)
			s.settle()
			must(t, expect.Locator(s.row(p.Barcodes[0])).ToHaveAttribute("data-outcome", "done"), "%s confirmed", p.Barcodes[0])
			if _, ok := lib.loans(p.Card)[p.Barcodes[0]]; !ok || lib.overrides() != before+1 {
				t.Errorf("after Tab and %s on Confirm: %s has %v and %d new overrides, want %s and 1",
					key, p.Card, lib.loans(p.Card), lib.overrides()-before, p.Barcodes[0])
			}
		})
	}

	// A note field on the desk (a text field of the page's own): a person's
	// typing and Enter stay there; a scan into it goes to the queue and leaves
	// the person's text as it was.
	t.Run("NoteField", func(t *testing.T) {
		s.t = t
		p := take()
		s.scan(p.Card)
		s.settle()
		_, err := page.Evaluate(`() => {
			const f = document.createElement("form");
			f.innerHTML = '<label for="note">Note</label> <input type="text" id="note" name="note" autocomplete="off">';
			f.addEventListener("submit", e => { e.preventDefault(); window.__notes = (window.__notes || 0) + 1; });
			document.getElementById("desk").appendChild(f);
		}`)
		must(t, err, "adding a note field")
		note := page.GetByLabel("Note", playwright.PageGetByLabelOptions{Exact: playwright.Bool(true)})
		must(t, note.Click(), "clicking the note field")
		rows, err := page.Locator("#scan-list tr").Count()
		must(t, err, "counting the rows")
		pressSlowly(t, page, "Rang twice", 150*time.Millisecond)
		must(t, expect.Locator(note).ToHaveValue("Rang twice"), "the person's typing stays in the note")
		notes, err := page.Evaluate(`() => window.__notes || 0`)
		must(t, err, "reading the notes sent")
		if notes != 1 {
			t.Errorf("the person's Enter in the note sent its form %v times, want once", notes)
		}
		must(t, expect.Locator(page.Locator("#scan")).ToHaveValue(""), "nothing typed in the scan field")
		must(t, expect.Locator(page.Locator("#scan-list tr")).ToHaveCount(rows), "no scan from the note's typing")

		scanKeys(t, page, p.Barcodes[0])
		s.settle()
		must(t, expect.Locator(s.row(p.Barcodes[0])).ToHaveAttribute("data-outcome", "done"), "the scan into the note checked out")
		if _, ok := lib.loans(p.Card)[p.Barcodes[0]]; !ok {
			t.Errorf("%s is not on loan to %s after a scan into the note", p.Barcodes[0], p.Card)
		}
		must(t, expect.Locator(note).ToHaveValue("Rang twice"), "the scan left the note as it was")
		must(t, expect.Locator(note).ToBeFocused(), "the note keeps the focus")
		notes, err = page.Evaluate(`() => window.__notes || 0`)
		must(t, err, "reading the notes sent")
		if notes != 1 {
			t.Errorf("the scan's Enter sent the note's form: %v times in all, want once", notes)
		}
	})

	// The workstation's scanner key gap, at 200 ms: keys 60 ms apart, then
	// Enter, are a scan even with the focus on Confirm; keys 450 ms apart are a
	// person's, and their Enter confirms.
	t.Run("KeyGapBothSides", func(t *testing.T) {
		s.t = t
		must(t, page.Locator("header").GetByRole(*playwright.AriaRoleLink, playwright.LocatorGetByRoleOptions{Name: "Workstation"}).Click(), "opening Workstation")
		gapField := page.GetByLabel("Scanner key gap (milliseconds)")
		must(t, expect.Locator(gapField).ToHaveValue("50"), "the default gap")
		must(t, gapField.Fill("fast"), "typing a gap that is no number")
		must(t, button(page, "Save").Click(), "saving")
		must(t, expect.Locator(page.Locator("#scangap-error")).ToContainText("whole number of milliseconds from 10 to 500"), "the gap is refused beside the field")
		checkA11y(t, page, "Workstation: scanner key gap refused")
		must(t, gapField.Fill("200"), "typing 200")
		must(t, button(page, "Save").Click(), "saving")
		must(t, expect.Locator(page.GetByText("Workstation settings saved")).ToBeVisible(), "saved")
		must(t, expect.Locator(gapField).ToHaveValue("200"), "the gap kept")
		checkA11y(t, page, "Workstation: scanner key gap saved")
		must(t, navLink(page, "Check out").Click(), "back to Check out")
		must(t, expect.Locator(page.Locator("body")).ToHaveAttribute("data-scan-gap", "200"), "the desk has the gap")

		p := take()
		ask(t, p.Card, p.Barcodes[0])
		before := lib.overrides()
		tabTo(t, page, confirm, "Confirm checkout")
		pressSlowly(t, page, p.Barcodes[1], 60*time.Millisecond)
		must(t, expect.Locator(s.row(p.Barcodes[1])).ToContainText("Waiting for your decision on "+p.Barcodes[0]), "keys 60 ms apart are a scan")
		checkA11y(t, page, "Check out: a scan waits behind a question")
		if got := lib.loans(p.Card); len(got) != 0 || lib.overrides() != before {
			t.Fatalf("after keys 60 ms apart on Confirm: %v and %d new overrides, want none", got, lib.overrides()-before)
		}

		// Keys slower than the gap, then Enter, on Confirm: no scan, and the
		// Enter presses nothing (a slow scanner's or a person's stray keys);
		// the scan field takes the focus.
		tabTo(t, page, confirm, "Confirm checkout")
		pressSlowly(t, page, "123", 450*time.Millisecond)
		s.fieldIsEmptyAndFocused("after keys 450 ms apart and Enter on Confirm")
		// A pressed Confirm is disabled at once, while its answer is awaited.
		must(t, expect.Locator(confirm).ToBeEnabled(), "Confirm not pressed")
		if got := lib.loans(p.Card); len(got) != 0 || lib.overrides() != before {
			t.Fatalf("after keys 450 ms apart and Enter on Confirm: %v and %d new overrides, want none", got, lib.overrides()-before)
		}
		must(t, expect.Locator(s.row("123")).ToHaveCount(0), "slow keys on a button are no scan")

		// A person's Tab then Enter confirms.
		tabTo(t, page, confirm, "Confirm checkout")
		must(t, page.Keyboard().Press("Enter"), "Enter on Confirm")
		must(t, expect.Locator(s.row(p.Barcodes[1])).Not().ToContainText("Waiting"), "the scan behind the question is sent")
		s.settle()
		got := lib.loans(p.Card)
		if len(got) != 2 || lib.overrides() != before+2 {
			t.Errorf("after Tab and Enter on Confirm: %v and %d new overrides, want %s and %s, 2",
				got, lib.overrides()-before, p.Barcodes[0], p.Barcodes[1])
		}
		s.inOrder(p.Barcodes[0], p.Barcodes[1])
	})

	// Stocktake: a scan with the focus on "See the results" is recorded, and
	// the results do not open.
	t.Run("Stocktake", func(t *testing.T) {
		s.t = t
		items, from, to, _ := stocktakeShelf(t, lib)
		must(t, navLink(page, "Reports").Click(), "clicking Reports")
		must(t, page.GetByRole("link", playwright.PageGetByRoleOptions{Name: "Stocktake", Exact: playwright.Bool(true)}).Click(), "clicking Stocktake")
		_, err := page.GetByLabel("Branch").SelectOption(playwright.SelectOptionValues{Labels: &[]string{"Central"}})
		must(t, err, "choosing Central")
		must(t, page.GetByLabel("Call numbers from").Fill(from), "typing the start of the shelf")
		must(t, page.GetByLabel("to", playwright.PageGetByLabelOptions{Exact: playwright.Bool(true)}).Fill(to), "typing the end of the shelf")
		must(t, button(page, "Start stocktake").Click(), "starting the stocktake")
		s.fieldIsEmptyAndFocused("on the stocktake page")
		url := page.URL()
		results := page.GetByRole("link", playwright.PageGetByRoleOptions{Name: "See the results"})
		for _, b := range items[:2] {
			must(t, results.Focus(), "focus on See the results")
			s.scan(b)
		}
		s.settle()
		if page.URL() != url {
			t.Fatalf("a scan on See the results opened %s", page.URL())
		}
		for _, b := range items[:2] {
			must(t, expect.Locator(s.row(b)).ToHaveAttribute("data-outcome", "done"), "%s on the right shelf", b)
		}
		s.inOrder(items[:2]...)
	})
}
