package e2e

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/catalog"
	"github.com/stacks-ils/stacks/circulation"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/holds"
	"github.com/stacks-ils/stacks/load"
	"github.com/stacks-ils/stacks/patrons"
)

// scanner is a barcode scanner and a librarian at one desk: the scanner types
// digits and Enter into whatever has focus, at its own pace, whether or not the
// page has answered the last scan.
type scanner struct {
	t    *testing.T
	page playwright.Page
	srv  *server
	gap  time.Duration
}

// scan types code and Enter into the focused element, as a scanner does (a few
// milliseconds a key: scanKeys), then waits the gap before the next scan.
func (s *scanner) scan(code string) {
	s.t.Helper()
	scanKeys(s.t, s.page, code)
	time.Sleep(s.gap) // the scanner's pace, under test: it does not wait for the page
}

// scanKeyGap is the time between a scanner's keys.
const scanKeyGap = 4 * time.Millisecond

// scanSessions are the DevTools sessions scanKeys sends keys through, one a page.
var scanSessions sync.Map // playwright.Page to playwright.CDPSession

// scanKeys sends each key of code, then Enter, into the focused element as a
// scanner does: key presses (Keyboard.Type inserts text, with no key events,
// when the focus is not in a text field), stamped scanKeyGap apart whatever the
// time they take to send, so that the browser sees a scanner's pace on a loaded
// machine too.
func scanKeys(t testing.TB, page playwright.Page, code string) {
	t.Helper()
	v, ok := scanSessions.Load(page)
	if !ok {
		cdp, err := page.Context().NewCDPSession(page)
		must(t, err, "opening a CDP session for the scanner")
		v, _ = scanSessions.LoadOrStore(page, cdp)
	}
	cdp := v.(playwright.CDPSession)
	at := time.Now()
	press := func(key, text, keyCode string, vk int) {
		ts := float64(at.UnixNano()) / 1e9
		_, err := cdp.Send("Input.dispatchKeyEvent", map[string]any{"type": "keyDown", "key": key, "code": keyCode,
			"windowsVirtualKeyCode": vk, "text": text, "unmodifiedText": text, "timestamp": ts})
		must(t, err, "scanning %s: %s down", code, key)
		_, err = cdp.Send("Input.dispatchKeyEvent", map[string]any{"type": "keyUp", "key": key, "code": keyCode,
			"windowsVirtualKeyCode": vk, "timestamp": ts + 0.001})
		must(t, err, "scanning %s: %s up", code, key)
		at = at.Add(scanKeyGap)
	}
	for _, c := range code {
		switch {
		case c >= '0' && c <= '9':
			press(string(c), string(c), "Digit"+string(c), int(c))
		case c >= 'A' && c <= 'Z':
			press(string(c), string(c), "Key"+string(c), int(c))
		case c >= 'a' && c <= 'z':
			press(string(c), string(c), "Key"+strings.ToUpper(string(c)), int(c-'a'+'A'))
		default:
			press(string(c), string(c), "", 0)
		}
	}
	press("Enter", "\r", "Enter", 13)
}

// settle waits until no scan is waiting or being sent.
func (s *scanner) settle() {
	s.t.Helper()
	must(s.t, expect.Locator(s.page.Locator(`#scan-list tr[data-outcome="waiting"]`)).ToHaveCount(0, playwright.LocatorAssertionsToHaveCountOptions{Timeout: playwright.Float(30_000)}),
		"every scan answered")
}

// row is the list's row for a scan.
func (s *scanner) row(code string) playwright.Locator {
	return s.page.Locator(fmt.Sprintf(`#scan-list tr[data-scan=%q]`, code))
}

// fieldIsEmptyAndFocused checks the scan field after a response: empty, with focus.
func (s *scanner) fieldIsEmptyAndFocused(what string) {
	s.t.Helper()
	f := s.page.Locator("#scan")
	must(s.t, expect.Locator(f).ToBeFocused(), "the scan field has focus %s", what)
	must(s.t, expect.Locator(f).ToHaveValue(""), "the scan field is empty %s", what)
}

// inOrder checks that the newest rows of the scan list are codes, each once and
// in the order scanned (the list shows the newest at the top).
func (s *scanner) inOrder(codes ...string) {
	s.t.Helper()
	v, err := s.page.Evaluate(`() => [...document.querySelectorAll("#scan-list tr[data-scan]")].map(tr => tr.getAttribute("data-scan"))`)
	must(s.t, err, "reading the scan list")
	listed := fmt.Sprint(v)
	got, _ := v.([]interface{})
	if len(got) < len(codes) {
		s.t.Fatalf("the scan list has %s, want %v at its top, newest first", listed, codes)
	}
	for i, code := range codes {
		if got[len(codes)-1-i] != code {
			s.t.Fatalf("the scan list has %s, want %v at its top, newest first", listed, codes)
		}
		must(s.t, expect.Locator(s.row(code)).ToHaveCount(1), "%s listed once", code)
	}
}

// tabTo presses Tab until target has focus, as a person reaches a button or a
// link from the keyboard.
func tabTo(t *testing.T, page playwright.Page, target playwright.Locator, what string) {
	t.Helper()
	must(t, target.WaitFor(), "waiting for %s", what)
	for range 40 {
		must(t, page.Keyboard().Press("Tab"), "Tab")
		focused, err := target.Evaluate(`el => el === document.activeElement`, nil)
		must(t, err, "is %s focused", what)
		if focused == true {
			return
		}
	}
	t.Fatalf("%s not reached in 40 Tabs", what)
}

// libraryDB opens the server's database from the test, to check outcomes through
// the domain packages.
type libraryDB struct {
	t *testing.T
	d *db.DB
}

func openLibraryDB(t *testing.T, srv *server) *libraryDB {
	d, err := db.Open(srv.DB, db.Options{ReadConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return &libraryDB{t: t, d: d}
}

func (l *libraryDB) patron(card string) *patrons.Patron {
	l.t.Helper()
	var p *patrons.Patron
	err := l.d.Read(context.Background(), func(tx *db.Tx) error {
		var err error
		p, err = patrons.FindByCard(tx, card)
		return err
	})
	if err != nil {
		l.t.Fatalf("patron %s: %v", card, err)
	}
	return p
}

// loans returns the barcodes a patron has on loan, with their renewal counts.
func (l *libraryDB) loans(card string) map[string]int {
	l.t.Helper()
	p := l.patron(card)
	out := map[string]int{}
	err := l.d.Read(context.Background(), func(tx *db.Tx) error {
		ls, err := circulation.PatronLoans(tx, p.ID)
		for _, ln := range ls {
			out[ln.Barcode] = ln.Renewals
		}
		return err
	})
	if err != nil {
		l.t.Fatal(err)
	}
	return out
}

func (l *libraryDB) itemStatus(barcode string) string {
	l.t.Helper()
	var it *catalog.Item
	err := l.d.Read(context.Background(), func(tx *db.Tx) error {
		var err error
		it, err = catalog.FindItemByBarcode(tx, barcode)
		return err
	})
	if err != nil {
		l.t.Fatal(err)
	}
	return it.Status
}

// overrides counts the checkout overrides in the audit log (each one a staff
// decision).
func (l *libraryDB) overrides() int {
	l.t.Helper()
	var n int
	err := l.d.Read(context.Background(), func(tx *db.Tx) error {
		return tx.QueryRow(`SELECT count(*) FROM audit_log WHERE action = 'checkout.override'`).Scan(&n)
	})
	if err != nil {
		l.t.Fatal(err)
	}
	return n
}

// overridesOtherThan counts the overrides of other blocks than code.
func (l *libraryDB) overridesOtherThan(code string) int {
	l.t.Helper()
	var n int
	err := l.d.Read(context.Background(), func(tx *db.Tx) error {
		return tx.QueryRow(`SELECT count(*) FROM audit_log WHERE action = 'checkout.override' AND detail NOT LIKE ? || ':%'`, code).Scan(&n)
	})
	if err != nil {
		l.t.Fatal(err)
	}
	return n
}

// hold places a hold on the copy barcode for the patron card, to be picked up
// at Central, and returns its id.
func (l *libraryDB) hold(card, barcode string) int64 {
	l.t.Helper()
	var placed holds.Placed
	err := l.d.Write(context.Background(), func(tx *db.Tx) error {
		it, err := catalog.FindItemByBarcode(tx, barcode)
		if err != nil {
			return err
		}
		placed, err = holds.Place(tx, holds.PlaceRequest{Actor: stacks.System, RecordID: it.RecordID, ItemID: it.ID,
			PatronCard: card, PickupBranchCode: "CEN"}, time.UTC)
		return err
	})
	if err != nil {
		l.t.Fatalf("a hold on %s for %s: %v", barcode, card, err)
	}
	return placed.HoldID
}

// owe charges a patron more than the fines limit, so that checkouts ask.
func (l *libraryDB) owe(card string) {
	l.t.Helper()
	p := l.patron(card)
	err := l.d.Write(context.Background(), func(tx *db.Tx) error {
		return patrons.Charge(tx, stacks.Actor{Name: "e2e"}, p.ID, patrons.KindFee, 2000, 0, "test fee over the limit")
	})
	if err != nil {
		l.t.Fatal(err)
	}
}

// emulateLatency delays every request of the page by latency each way, through
// the Chrome DevTools protocol, as a slow libraryDB network does.
func emulateLatency(t *testing.T, bctx playwright.BrowserContext, page playwright.Page, latency time.Duration) {
	t.Helper()
	cdp, err := bctx.NewCDPSession(page)
	must(t, err, "opening a CDP session")
	_, err = cdp.Send("Network.enable", nil)
	must(t, err, "Network.enable")
	_, err = cdp.Send("Network.emulateNetworkConditions", map[string]interface{}{
		"offline": false, "latency": latency.Milliseconds(), "downloadThroughput": -1, "uploadThroughput": -1,
	})
	must(t, err, "Network.emulateNetworkConditions")
}

// scannerLibrary starts a server on a fresh demo library for t and returns
// it, its database and take, which hands out a patron of Central with six
// items of its own (load.SharesFromDB), a different one each call.
func scannerLibrary(t *testing.T) (*server, *libraryDB, func() load.Share) {
	t.Helper()
	srv := startServer(t)
	lib := openLibraryDB(t, srv)
	shares, err := load.SharesFromDB(context.Background(), srv.DB, load.ShareQuery{Branch: "CEN", Items: 6, Max: 32})
	if err != nil {
		t.Fatal(err)
	}
	if len(shares) < 25 {
		t.Fatalf("the demo library has %d shares of patrons and items, want 25", len(shares))
	}
	next := 0
	return srv, lib, func() load.Share {
		t.Helper()
		if next == len(shares) {
			t.Fatalf("all %d shares of patrons and items are taken", len(shares))
		}
		next++
		return shares[next-1]
	}
}

// TestScannerDesk drives Check out and Check in as a barcode scanner does, at 100
// and 250 ms between scans, over 100 and 300 ms of network latency each way, and
// checks that every scan ends in exactly its outcome in the database and that no
// override is recorded that staff did not click.
func TestScannerDesk(t *testing.T) {
	t.Parallel()
	browser := launchBrowser(t)
	srv, lib, take := scannerLibrary(t)

	// Each pace runs on a server and demo library of its own, beside the
	// others: most of its time is the emulated network's and the scanner's
	// waiting, and the overrides it counts in the audit log are its own.
	for _, c := range []struct{ gap, latency time.Duration }{
		{250 * time.Millisecond, 100 * time.Millisecond},
		{100 * time.Millisecond, 100 * time.Millisecond},
		{250 * time.Millisecond, 300 * time.Millisecond},
		{100 * time.Millisecond, 300 * time.Millisecond},
	} {
		t.Run(fmt.Sprintf("gap%dms/latency%dms", c.gap.Milliseconds(), c.latency.Milliseconds()), func(t *testing.T) {
			t.Parallel()
			srv, lib, take := scannerLibrary(t)
			page, bctx := newPage(t, browser)
			_, err := page.Goto(srv.BaseURL + "/checkout")
			must(t, err, "opening the staff site")
			login(t, page, "desk", "desk")
			must(t, expect.Page(page).ToHaveURL(srv.BaseURL+"/checkout"), "on Check out after logging in")
			emulateLatency(t, bctx, page, c.latency)
			s := &scanner{t: t, page: page, srv: srv, gap: c.gap}

			t.Run("TenOutTenIn", func(t *testing.T) {
				s.t = t
				a, b := take(), take()
				items := append(append([]string{}, a.Barcodes...), b.Barcodes[:4]...)
				s.scan(a.Card)
				for _, bc := range items {
					s.scan(bc)
				}
				s.settle()
				got := lib.loans(a.Card)
				if len(got) != len(items) {
					t.Fatalf("%s has %d loans after 10 scanned checkouts, want %d: %v", a.Card, len(got), len(items), got)
				}
				for _, bc := range items {
					if _, ok := got[bc]; !ok {
						t.Errorf("%s is not on loan to %s", bc, a.Card)
					}
					must(t, expect.Locator(s.row(bc)).ToHaveAttribute("data-outcome", "done"), "%s shown checked out", bc)
				}
				s.fieldIsEmptyAndFocused("after ten checkouts")

				must(t, navLink(page, "Check in").Click(), "clicking Check in")
				must(t, expect.Page(page).ToHaveURL(onCheckinPage), "on the Check in page")
				s.fieldIsEmptyAndFocused("on Check in")
				for i, bc := range items {
					if i == 4 {
						s.scan("XBAD0001")
					}
					s.scan(bc)
				}
				s.settle()
				if got := lib.loans(a.Card); len(got) != 0 {
					t.Errorf("after ten checkins with a bad scan among them, %s still has %v", a.Card, got)
				}
				for _, bc := range items {
					if st := lib.itemStatus(bc); st != catalog.StatusAvailable {
						t.Errorf("%s is %s after its checkin, want available", bc, st)
					}
					must(t, expect.Locator(s.row(bc)).ToContainText("Returned from"), "%s shown returned", bc)
				}
				must(t, expect.Locator(s.row("XBAD0001")).ToHaveAttribute("data-outcome", "refused"), "the bad scan is shown refused")
				must(t, expect.Locator(s.row("XBAD0001")).ToContainText("No item has barcode XBAD0001"), "the bad scan says why")
				s.fieldIsEmptyAndFocused("after the checkins")
				must(t, navLink(page, "Check out").Click(), "back to Check out")
				must(t, expect.Page(page).ToHaveURL(srv.BaseURL+"/checkout"), "on Check out")
				s.fieldIsEmptyAndFocused("back on Check out")
			})

			t.Run("ScanDuringFinesConfirmation", func(t *testing.T) {
				s.t = t
				p := take()
				lib.owe(p.Card)
				before := lib.overrides()
				s.scan(p.Card)
				s.scan(p.Barcodes[0])
				s.scan(p.Barcodes[1])
				s.scan(p.Barcodes[2])
				decision := s.row(p.Barcodes[0])
				must(t, expect.Locator(decision).ToHaveAttribute("data-outcome", "decision"), "the first item asks")
				must(t, expect.Locator(decision).ToContainText("in fines"), "naming the fines")
				must(t, expect.Locator(s.row(p.Barcodes[2])).ToContainText("Waiting for your decision on "+p.Barcodes[0]), "later scans wait visibly")
				s.fieldIsEmptyAndFocused("while a decision waits")
				// Nothing to wait for: a request wrongly sent would have reached
				// the server within the emulated latency.
				time.Sleep(2 * c.latency)
				if n := len(lib.loans(p.Card)); n != 0 || lib.overrides() != before {
					t.Fatalf("while the decision waited: %d loans and %d new overrides, want none", n, lib.overrides()-before)
				}
				// Alt+C: the shortcut shown on the button, a key a scanner does not send.
				must(t, page.Keyboard().Press("Alt+C"), "Alt+C confirms")
				s.settle()
				got := lib.loans(p.Card)
				for _, bc := range p.Barcodes[:3] {
					if _, ok := got[bc]; !ok {
						t.Errorf("%s not on loan to %s after the confirmation", bc, p.Card)
					}
				}
				// One click confirms the fines for the visit (asked once per visit): each
				// of the three loans records that override, and nothing else.
				if len(got) != 3 || lib.overrides() != before+3 || lib.overridesOtherThan("fines") != 0 {
					t.Errorf("%d loans and %d overrides (%d not for fines) after confirming the fines, want 3, 3 and 0",
						len(got), lib.overrides()-before, lib.overridesOtherThan("fines"))
				}
				s.fieldIsEmptyAndFocused("after the confirmation")
			})

			t.Run("ScanDuringRenewalOffer", func(t *testing.T) {
				s.t = t
				p := take()
				s.scan(p.Card)
				s.scan(p.Barcodes[0])
				s.settle()
				lib.lentAWeekAgo(p.Barcodes[0]) // so that a renewal would move its due date
				before := lib.overrides()
				s.scan(p.Barcodes[0]) // again: offers a renewal
				s.scan(p.Barcodes[1]) // a different book, during the offer
				must(t, expect.Locator(s.row(p.Barcodes[0]).First()).ToHaveAttribute("data-outcome", "decision"), "the rescan offers a renewal")
				must(t, expect.Locator(s.row(p.Barcodes[1])).ToContainText("Waiting for your decision"), "the other book waits")
				// The scanner's Enter (an empty scan) presses nothing.
				must(t, page.Keyboard().Press("Enter"), "Enter")
				time.Sleep(2 * c.latency) // as above: anything wrongly sent would have arrived
				if got := lib.loans(p.Card); got[p.Barcodes[0]] != 0 || len(got) != 1 {
					t.Fatalf("during the renewal offer: %v, want only %s, not renewed", got, p.Barcodes[0])
				}
				must(t, page.Keyboard().Press("Alt+X"), "Alt+X cancels")
				s.settle()
				got := lib.loans(p.Card)
				if got[p.Barcodes[0]] != 0 || len(got) != 2 {
					t.Errorf("after cancelling the renewal: %v, want both items, the first not renewed", got)
				}
				if lib.overrides() != before {
					t.Error("cancelling recorded an override")
				}
				must(t, expect.Locator(s.row(p.Barcodes[1])).ToHaveAttribute("data-outcome", "done"), "the waiting book was checked out")
			})

			// A scanner types into whatever has focus. With focus on Confirm
			// (reached with Tab) while the desk asks about an item on loan to
			// another patron and on hold for a third, each scan goes to the queue
			// behind the question and its Enter confirms nothing.
			t.Run("ScanWithFocusOnConfirm", func(t *testing.T) {
				s.t = t
				reader, borrower, holder := take(), take(), take()
				lent := borrower.Barcodes[0]
				s.scan(borrower.Card)
				s.scan(lent)
				s.settle()
				if _, ok := lib.loans(borrower.Card)[lent]; !ok {
					t.Fatalf("%s is not on loan to %s", lent, borrower.Card)
				}
				hold := lib.hold(holder.Card, lent)
				before := lib.overrides()
				s.scan(reader.Card)
				s.scan(lent)
				decision := page.Locator(`#scan-list tr[data-outcome="decision"]`)
				must(t, expect.Locator(decision).ToHaveAttribute("data-scan", lent), "the lent copy asks")
				confirm := decision.GetByRole(*playwright.AriaRoleButton, playwright.LocatorGetByRoleOptions{Name: "Confirm checkout"})
				url := page.URL()
				for _, bc := range reader.Barcodes[:2] {
					tabTo(t, page, confirm, "Confirm checkout")
					s.scan(bc)
				}
				must(t, expect.Locator(s.row(reader.Barcodes[1])).ToContainText("Waiting for your decision on "+lent), "the scans wait behind the question")
				// Nothing to wait for: a request wrongly sent would have reached
				// the server within the emulated latency.
				time.Sleep(2 * c.latency)
				if got := lib.loans(reader.Card); len(got) != 0 || lib.overrides() != before {
					t.Fatalf("with focus on Confirm: %s has %v and %d new overrides, want none", reader.Card, got, lib.overrides()-before)
				}
				if _, ok := lib.loans(borrower.Card)[lent]; !ok {
					t.Fatalf("%s was taken from %s", lent, borrower.Card)
				}
				if page.URL() != url {
					t.Fatalf("the scans navigated to %s", page.URL())
				}
				must(t, page.Keyboard().Press("Alt+X"), "Alt+X cancels")
				s.settle()
				got := lib.loans(reader.Card)
				if len(got) != 2 || lib.overrides() != before {
					t.Errorf("after cancelling: %s has %v and %d new overrides, want the two scanned and none", reader.Card, got, lib.overrides()-before)
				}
				if _, ok := lib.loans(borrower.Card)[lent]; !ok {
					t.Errorf("%s was taken from %s", lent, borrower.Card)
				}
				if st := lib.value(`SELECT status FROM holds WHERE id = ?`, hold); st != "queued" {
					t.Errorf("%s's hold is %s, want queued", holder.Card, st)
				}
				for _, bc := range reader.Barcodes[:2] {
					must(t, expect.Locator(s.row(bc)).ToHaveAttribute("data-outcome", "done"), "%s checked out", bc)
				}
				s.inOrder(lent, reader.Barcodes[0], reader.Barcodes[1])
				s.fieldIsEmptyAndFocused("after scans on Confirm")
			})

			// With focus on the "Due-date slip" link, a scan checks out and the
			// slip does not open.
			t.Run("ScanWithFocusOnLink", func(t *testing.T) {
				s.t = t
				p := take()
				s.scan(p.Card)
				s.scan(p.Barcodes[0])
				s.settle()
				url := page.URL()
				slip := page.GetByRole(*playwright.AriaRoleLink, playwright.PageGetByRoleOptions{Name: "Due-date slip", Exact: playwright.Bool(true)})
				for _, bc := range p.Barcodes[1:3] {
					must(t, slip.Focus(), "focus on Due-date slip")
					s.scan(bc)
				}
				s.settle()
				if page.URL() != url {
					t.Fatalf("a scan on the Due-date slip link opened %s", page.URL())
				}
				if got := lib.loans(p.Card); len(got) != 3 {
					t.Errorf("%s has %v, want the three scanned", p.Card, got)
				}
				for _, bc := range p.Barcodes[:3] {
					must(t, expect.Locator(s.row(bc)).ToHaveAttribute("data-outcome", "done"), "%s checked out", bc)
				}
				s.inOrder(p.Barcodes[:3]...)
				s.fieldIsEmptyAndFocused("after scans on the link")
			})

			// After a click on the patron summary (to read it), the focus is on
			// the page: scans still check out.
			t.Run("ScanAfterClickOnPage", func(t *testing.T) {
				s.t = t
				p := take()
				s.scan(p.Card)
				for _, bc := range p.Barcodes[:2] {
					// An answer gives the scan field the focus back when the page
					// has it: the click comes after the answers.
					s.settle()
					must(t, page.Locator("#desk-patron dl.facts dt").First().Click(), "clicking the patron summary")
					onBody, err := page.Evaluate(`() => document.activeElement === document.body`)
					must(t, err, "reading the focus")
					if onBody != true {
						t.Fatal("after a click on the patron summary, the focus is not on the page")
					}
					s.scan(bc)
				}
				s.settle()
				if got := lib.loans(p.Card); len(got) != 2 {
					t.Errorf("%s has %v, want the two scanned", p.Card, got)
				}
				s.inOrder(p.Barcodes[:2]...)
				s.fieldIsEmptyAndFocused("after scans on the page")
			})

			t.Run("PatronCardInBarcodeField", func(t *testing.T) {
				s.t = t
				first, second := take(), take()
				firstName := lib.patron(first.Card).Name()
				s.scan(first.Card)
				s.scan(first.Barcodes[0])
				s.scan(second.Card)
				s.scan(second.Barcodes[0])
				s.settle()
				if got := lib.loans(second.Card); len(got) != 1 {
					t.Errorf("the item scanned after %s's card: %s has %v", second.Card, second.Card, got)
				}
				if got := lib.loans(first.Card); len(got) != 1 {
					t.Errorf("%s has %v, want only the item scanned before the next card", first.Card, got)
				}
				must(t, expect.Locator(page.Locator("#desk-patron")).ToContainText(lib.patron(second.Card).Name()), "the second patron is served")
				must(t, expect.Locator(page.Locator("#desk")).Not().ToContainText(firstName), "nothing of the first patron is shown")
				must(t, expect.Locator(page.GetByLabel("Barcode", playwright.PageGetByLabelOptions{Exact: playwright.Bool(true)})).ToBeFocused(), "the Barcode field keeps focus")
				must(t, button(page, "Finish with this patron").Click(), "Finish with this patron")
				must(t, expect.Locator(page.GetByLabel("Card number", playwright.PageGetByLabelOptions{Exact: playwright.Bool(true)})).ToBeFocused(), "the Card number field has focus")
				must(t, expect.Locator(page.Locator("#desk")).Not().ToContainText(lib.patron(second.Card).Name(), playwright.LocatorAssertionsToContainTextOptions{}), "the finished patron is gone")
			})
		})
	}

	t.Run("NetworkFailure", func(t *testing.T) {
		page, bctx := newPage(t, browser)
		_, err := page.Goto(srv.BaseURL + "/checkout")
		must(t, err, "opening the staff site")
		login(t, page, "desk", "desk")
		must(t, expect.Page(page).ToHaveURL(srv.BaseURL+"/checkout"), "on Check out after logging in")
		s := &scanner{t: t, page: page, srv: srv, gap: 100 * time.Millisecond}
		p := take()
		s.scan(p.Card)
		s.settle()
		must(t, bctx.SetOffline(true), "the network goes down")
		s.scan(p.Barcodes[0])
		s.scan(p.Barcodes[1])
		must(t, expect.Locator(s.row(p.Barcodes[0])).ToHaveAttribute("data-outcome", "failed"), "the scan sent into a dead network is marked")
		must(t, expect.Locator(s.row(p.Barcodes[0])).ToContainText("No answer from the server"), "and says so")
		must(t, expect.Locator(s.row(p.Barcodes[1])).ToHaveAttribute("data-outcome", "waiting"), "the next scan waits, not sent")
		s.fieldIsEmptyAndFocused("with the network down")
		if got := lib.loans(p.Card); len(got) != 0 {
			t.Fatalf("with the network down: %v on loan", got)
		}
		must(t, bctx.SetOffline(false), "the network comes back")
		must(t, s.row(p.Barcodes[0]).GetByRole(*playwright.AriaRoleButton, playwright.LocatorGetByRoleOptions{Name: "Send again"}).Click(), "Send again")
		s.settle()
		got := lib.loans(p.Card)
		if len(got) != 2 {
			t.Errorf("after sending again: %v, want both items once", got)
		}
		for _, bc := range p.Barcodes[:2] {
			must(t, expect.Locator(s.row(bc)).ToHaveAttribute("data-outcome", "done"), "%s checked out", bc)
		}
		s.fieldIsEmptyAndFocused("after sending again")
	})

	// Each answered scan plays its own sound, once, and owns the banner: an error
	// after a transfer plays the error sound only and has the banner, the
	// transfer's message staying beside it; a plain return clears the banner, not
	// the message; a workstation with sounds off plays none.
	t.Run("SoundsAndBanners", func(t *testing.T) {
		page, bctx := newPage(t, browser)
		must(t, bctx.AddInitScript(playwright.Script{Content: playwright.String(`
			window.__played = [];
			HTMLMediaElement.prototype.play = function () {
				window.__played.push(this.getAttribute("data-sound"));
				return Promise.resolve();
			};`)}), "recording the sounds played")
		_, err := page.Goto(srv.BaseURL + "/checkin")
		must(t, err, "opening the staff site")
		login(t, page, "desk", "desk")
		must(t, expect.Page(page).ToHaveURL(onCheckinPage), "on Check in after logging in")
		s := &scanner{t: t, page: page, srv: srv, gap: 100 * time.Millisecond}
		s.fieldIsEmptyAndFocused("on Check in")
		played := func() string {
			t.Helper()
			v, err := page.Evaluate(`() => window.__played.join(",")`)
			must(t, err, "reading the sounds played")
			return v.(string)
		}
		var transfer, plain string
		err = lib.d.Read(context.Background(), func(tx *db.Tx) error {
			if err := tx.QueryRow(`SELECT i.barcode FROM items i JOIN branches b ON b.id = i.home_branch_id
				WHERE b.code = 'EAS' AND i.status = 'available'
				  AND NOT EXISTS (SELECT 1 FROM holds h WHERE h.record_id = i.record_id AND h.status = 'queued')
				ORDER BY i.id LIMIT 1`).Scan(&transfer); err != nil {
				return err
			}
			return nil
		})
		must(t, err, "finding an Eastside item")
		plain = take().Barcodes[0]

		s.scan(transfer)
		s.settle()
		must(t, expect.Locator(page.Locator("#desk-messages")).ToContainText("Transfer to Eastside"), "the transfer's message")
		if got := played(); got != "transfer" {
			t.Fatalf("sounds after a transfer: %q, want transfer", got)
		}
		s.scan("XBAD0002")
		s.settle()
		must(t, expect.Locator(page.Locator("#desk-banner")).ToContainText("Not checked in: XBAD0002"), "the error's banner")
		must(t, expect.Locator(page.Locator("#desk-banner")).Not().ToContainText("Transfer to"), "the transfer's banner is gone")
		if got := played(); got != "transfer,error" {
			t.Fatalf("sounds after an error: %q, want transfer,error (nothing replayed)", got)
		}
		s.scan(plain)
		s.settle()
		must(t, expect.Locator(page.Locator("#desk-banner section")).ToHaveCount(0), "a plain return clears the banner")
		must(t, expect.Locator(page.Locator("#desk-messages")).ToContainText("Transfer to Eastside"), "the transfer's message stays until acknowledged")
		if got := played(); got != "transfer,error" {
			t.Fatalf("sounds after a plain return: %q, want no new sound", got)
		}

		must(t, page.Locator("header").GetByRole(*playwright.AriaRoleLink, playwright.LocatorGetByRoleOptions{Name: "Workstation"}).Click(), "opening Workstation")
		must(t, page.GetByLabel("Off", playwright.PageGetByLabelOptions{Exact: playwright.Bool(true)}).Check(), "sounds off")
		must(t, button(page, "Save").Click(), "saving")
		must(t, expect.Locator(page.GetByText("Workstation settings saved")).ToBeVisible(), "saved")
		must(t, navLink(page, "Check in").Click(), "back to Check in")
		must(t, expect.Page(page).ToHaveURL(onCheckinPage), "on Check in")
		s.fieldIsEmptyAndFocused("back on Check in")
		s.scan("XBAD0003")
		s.settle()
		must(t, expect.Locator(s.row("XBAD0003")).ToHaveAttribute("data-outcome", "refused"), "the bad scan is refused")
		if got := played(); got != "" {
			t.Errorf("sounds with the workstation's sounds off: %q, want none", got)
		}
	})

	t.Run("IdleDesk", func(t *testing.T) {
		page, bctx := newPage(t, browser)
		must(t, bctx.Clock().Install(), "installing the page clock")
		_, err := page.Goto(srv.BaseURL + "/checkout")
		must(t, err, "opening the staff site")
		login(t, page, "desk", "desk")
		must(t, expect.Page(page).ToHaveURL(srv.BaseURL+"/checkout"), "on Check out after logging in")
		s := &scanner{t: t, page: page, srv: srv, gap: 100 * time.Millisecond}
		s.fieldIsEmptyAndFocused("on Check out")
		p := take()
		name := lib.patron(p.Card).Name()
		s.scan(p.Card)
		s.settle()
		must(t, expect.Locator(page.Locator("#desk-patron")).ToContainText(name), "the patron is open")
		must(t, page.Clock().FastForward("05:10"), "five minutes and ten seconds pass")
		must(t, expect.Locator(page.Locator("#desk-patron")).Not().ToContainText(name), "the idle visit ends")
		must(t, expect.Locator(page.Locator("#scan-list")).ToContainText("ended after 5 minutes without activity"), "and the desk says why")
		must(t, expect.Locator(page.Locator("#desk")).Not().ToContainText(name), "nothing of the patron is shown")
		s.scan(p.Barcodes[0])
		s.settle()
		if got := lib.loans(p.Card); len(got) != 0 {
			t.Errorf("a scan after the idle end lent %v to the previous patron", got)
		}
		must(t, expect.Locator(s.row(p.Barcodes[0])).ToHaveAttribute("data-outcome", "refused"), "the item is refused: no patron")
	})
}

// lentAWeekAgo moves the current loan of barcode a week back: due a week
// sooner, so that renewing it now would move its due date.
func (l *libraryDB) lentAWeekAgo(barcode string) {
	l.t.Helper()
	const where = ` WHERE returned_at IS NULL AND item_id = (SELECT id FROM items WHERE barcode = ?)`
	for _, col := range []string{"issued_at", "due_at"} {
		at, err := db.ParseTime(l.value(`SELECT `+col+` FROM loans`+where, barcode))
		if err != nil {
			l.t.Fatalf("the %s of %s: %v", col, barcode, err)
		}
		l.exec(`UPDATE loans SET `+col+` = ?`+where, db.FormatTime(at.AddDate(0, 0, -7)), barcode)
	}
}
