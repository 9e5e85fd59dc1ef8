package e2e

import (
	"context"
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/holds"
)

// checkinFixture are copies of a fresh demo library that check in each their
// own way at Central: shelf fills a hold picked up at Central, travel one
// picked up at Westside, east belongs at Eastside, plain goes back on the shelf.
type checkinFixture struct {
	shelf, travel, east string
	plain               []string
}

// freeCopies lists n copies at home at the branch with code, available, of
// titles nobody is waiting for, one a title.
func (l *libraryDB) freeCopies(code string, n int) []string {
	l.t.Helper()
	var out []string
	err := l.d.Read(context.Background(), func(tx *db.Tx) error {
		rows, err := tx.Query(`SELECT min(i.barcode) FROM items i JOIN branches b ON b.id = i.home_branch_id
			WHERE b.code = ? AND i.status = 'available' AND i.current_branch_id = i.home_branch_id
			  AND NOT EXISTS (SELECT 1 FROM holds h WHERE h.record_id = i.record_id AND h.status IN ('queued', 'in_transit', 'waiting'))
			GROUP BY i.record_id ORDER BY min(i.id) LIMIT ?`, code, n)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var bc string
			if err := rows.Scan(&bc); err != nil {
				return err
			}
			out = append(out, bc)
		}
		return rows.Err()
	})
	if err != nil || len(out) != n {
		l.t.Fatalf("%d free copies at %s: %v (%d found)", n, code, err, len(out))
	}
	return out
}

// placeHold places a hold for card on the title of barcode, picked up at pickup.
func (l *libraryDB) placeHold(barcode, card, pickup string) {
	l.t.Helper()
	err := l.d.Write(context.Background(), func(tx *db.Tx) error {
		var rec int64
		if err := tx.QueryRow(`SELECT record_id FROM items WHERE barcode = ?`, barcode).Scan(&rec); err != nil {
			return err
		}
		_, err := holds.Place(tx, holds.PlaceRequest{Actor: stacks.System, RecordID: rec, PatronCard: card, PickupBranchCode: pickup}, time.UTC)
		return err
	})
	if err != nil {
		l.t.Fatalf("hold on %s for %s: %v", barcode, card, err)
	}
}

// acknowledged counts the acknowledged checkins of barcode.
func (l *libraryDB) acknowledged(barcode string) int {
	return int(l.int(`SELECT count(*) FROM checkins c JOIN items i ON i.id = c.item_id
		WHERE i.barcode = ? AND c.acked_at IS NOT NULL AND c.acked_by = 'desk'`, barcode))
}

func newCheckinFixture(t *testing.T, lib *libraryDB) checkinFixture {
	central := lib.freeCopies("CEN", 5)
	f := checkinFixture{shelf: central[0], travel: central[1], east: lib.freeCopies("EAS", 1)[0], plain: central[2:]}
	lib.placeHold(f.shelf, "P0003", "CEN")
	lib.placeHold(f.travel, "P0003", "WES")
	return f
}

// TestCheckinMessages: at Check in, a hold found here, a hold found for another
// branch and a transfer home stack above the list and stay there through more
// scans and a reload, each with its slips and where the copy goes, until staff
// press Acknowledge (recorded in the database), with the desk script and
// without JavaScript (the same page, so axe, which needs JavaScript, checks it
// in the run with the script); the Transfers page prints the hold transit's
// slip.
func TestCheckinMessages(t *testing.T) {
	t.Parallel()
	browser := launchBrowser(t)

	t.Run("Script", func(t *testing.T) {
		srv := startServer(t)
		lib := openLibraryDB(t, srv)
		f := newCheckinFixture(t, lib)
		page := newA11yPage(t, browser)
		_, err := page.Goto(srv.BaseURL + "/checkin")
		must(t, err, "opening Check in")
		login(t, page, "desk", "desk")
		must(t, expect.Page(page).ToHaveURL(onCheckinPage), "on Check in")
		s := &scanner{t: t, page: page, srv: srv, gap: 100 * time.Millisecond}
		s.fieldIsEmptyAndFocused("on Check in")

		messages := page.Locator("#desk-messages section")
		message := func(barcode string) playwright.Locator {
			return messages.Filter(playwright.LocatorFilterOptions{HasText: barcode})
		}
		s.scan(f.shelf)
		s.settle()
		must(t, expect.Locator(message(f.shelf)).ToContainText("Hold found"), "Hold found for %s", f.shelf)
		for _, bc := range []string{f.travel, f.east, f.plain[0], f.plain[1], f.plain[2]} {
			s.scan(bc)
		}
		s.settle()
		check := func(when string) {
			t.Helper()
			must(t, expect.Locator(messages).ToHaveCount(3), "three messages %s", when)
			must(t, expect.Locator(messages.First()).ToContainText("Transfer to Eastside"), "the newest first %s", when)
			shelf, travel, east := message(f.shelf), message(f.travel), message(f.east)
			must(t, expect.Locator(shelf).ToContainText("Put it on the hold shelf here at Central"), "where %s goes %s", f.shelf, when)
			must(t, expect.Locator(shelf.GetByRole(*playwright.AriaRoleLink, playwright.LocatorGetByRoleOptions{Name: "Print hold slip"})).ToBeVisible(), "%s's hold slip %s", f.shelf, when)
			must(t, expect.Locator(travel).ToContainText("Send it to Westside for pickup"), "where %s goes %s", f.travel, when)
			must(t, expect.Locator(travel.GetByRole(*playwright.AriaRoleLink, playwright.LocatorGetByRoleOptions{Name: "Print transit slip"})).ToBeVisible(), "%s's transit slip %s", f.travel, when)
			must(t, expect.Locator(east.GetByRole(*playwright.AriaRoleLink, playwright.LocatorGetByRoleOptions{Name: "Print transit slip"})).ToBeVisible(), "%s's transit slip %s", f.east, when)
			row := s.row(f.travel)
			must(t, expect.Locator(row).ToContainText("send it to Westside for pickup"), "the %s row says where it goes %s", f.travel, when)
			must(t, expect.Locator(row.GetByRole(*playwright.AriaRoleLink, playwright.LocatorGetByRoleOptions{Name: "Hold slip"})).ToBeVisible(), "the %s row's hold slip %s", f.travel, when)
			must(t, expect.Locator(row.GetByRole(*playwright.AriaRoleLink, playwright.LocatorGetByRoleOptions{Name: "Transit slip"})).ToBeVisible(), "the %s row's transit slip %s", f.travel, when)
		}
		check("after more scans")
		checkA11y(t, page, "Check in: three messages waiting")

		_, err = page.Reload()
		must(t, err, "reloading Check in")
		check("after a reload")

		ack := message(f.shelf).GetByRole(*playwright.AriaRoleButton, playwright.LocatorGetByRoleOptions{Name: "Acknowledge"})
		must(t, ack.Focus(), "moving to Acknowledge")
		must(t, page.Keyboard().Press("Enter"), "pressing Acknowledge")
		must(t, expect.Locator(messages).ToHaveCount(2), "two messages after acknowledging %s", f.shelf)
		must(t, expect.Locator(message(f.shelf)).ToHaveCount(0), "%s's message is gone", f.shelf)
		s.fieldIsEmptyAndFocused("after acknowledging")
		if n := lib.acknowledged(f.shelf); n != 1 {
			t.Errorf("%s acknowledged %d times in the database, want 1", f.shelf, n)
		}
		checkA11y(t, page, "Check in: a message acknowledged")
		// Scans go on with the focus on a message's Acknowledge, then on its
		// slip link, as a scanner types into whatever has focus: its Enter
		// presses and opens nothing, and a plain return leaves the messages as
		// they are.
		url := page.URL()
		travel := message(f.travel)
		must(t, travel.GetByRole(*playwright.AriaRoleButton, playwright.LocatorGetByRoleOptions{Name: "Acknowledge"}).Focus(), "focus on %s's Acknowledge", f.travel)
		s.scan(f.plain[0])
		s.settle()
		must(t, travel.GetByRole(*playwright.AriaRoleLink, playwright.LocatorGetByRoleOptions{Name: "Print transit slip"}).Focus(), "focus on %s's transit slip", f.travel)
		s.scan(f.plain[1])
		s.settle()
		must(t, expect.Locator(messages).ToHaveCount(2), "two messages after two more scans")
		if page.URL() != url {
			t.Errorf("a scan with the focus on a slip link opened %s", page.URL())
		}
		if n := lib.acknowledged(f.travel); n != 0 {
			t.Errorf("a scan with the focus on Acknowledge acknowledged %s (%d in the database)", f.travel, n)
		}
		for _, bc := range f.plain[:2] {
			must(t, expect.Locator(s.row(bc).First()).ToBeVisible(), "%s in the list", bc)
		}
		_, err = page.Reload()
		must(t, err, "reloading Check in")
		must(t, expect.Locator(messages).ToHaveCount(2), "two messages after a reload")

		// The hold transit's slip, from the Transfers page.
		must(t, navLink(page, "Transfers").Click(), "opening Transfers")
		must(t, page.GetByRole(*playwright.AriaRoleLink, playwright.PageGetByRoleOptions{Name: regexp.MustCompile(fmt.Sprintf("^Transit slip for .*, %s$", regexp.QuoteMeta(f.travel)))}).Click(), "opening %s's transit slip", f.travel)
		must(t, expect.Locator(page.Locator(".transfer-slip")).ToContainText("Hold for Casey Waiting (P0003)"), "the hold transit's slip")
		must(t, expect.Locator(page.Locator(".transfer-slip")).ToContainText("Transfer to Westside"), "the hold transit's slip names Westside")
	})

	// Two patrons' returns, one after the other, make two receipts: "Checkin
	// receipt" prints the latest borrower's, which links to the other's.
	t.Run("ReceiptPerPatron", func(t *testing.T) {
		srv := startServer(t)
		lib := openLibraryDB(t, srv)
		copies := lib.freeCopies("CEN", 3)
		page := newA11yPage(t, browser)
		_, err := page.Goto(srv.BaseURL + "/checkin")
		must(t, err, "opening Check in")
		login(t, page, "desk", "desk")
		must(t, expect.Page(page).ToHaveURL(onCheckinPage), "on Check in")
		post := func(path string, form map[string]any) {
			t.Helper()
			r, err := page.Context().Request().Post(srv.BaseURL+path, playwright.APIRequestContextPostOptions{Form: form})
			must(t, err, "POST %s", path)
			if !r.Ok() {
				t.Fatalf("POST %s %v: %d", path, form, r.Status())
			}
		}
		post("/checkout/patron", map[string]any{"card": "P0001"})
		post("/checkout", map[string]any{"barcode": copies[0]})
		post("/checkout", map[string]any{"barcode": copies[1]})
		post("/checkout/done", map[string]any{})
		post("/checkout/patron", map[string]any{"card": "P0003"})
		post("/checkout", map[string]any{"barcode": copies[2]})
		post("/checkout/done", map[string]any{})
		_, err = page.Reload()
		must(t, err, "reloading Check in")
		s := &scanner{t: t, page: page, srv: srv, gap: 100 * time.Millisecond}
		for _, bc := range copies {
			s.scan(bc)
		}
		s.settle()
		must(t, page.GetByRole(*playwright.AriaRoleLink, playwright.PageGetByRoleOptions{Name: "Checkin receipt", Exact: playwright.Bool(true)}).Click(), "opening the checkin receipt")
		slip := page.Locator(".slip")
		must(t, expect.Locator(slip).ToContainText("Casey Waiting (P0003)"), "the latest borrower's receipt")
		must(t, expect.Locator(slip).ToContainText(copies[2]), "with their return")
		for _, bc := range copies[:2] {
			must(t, expect.Locator(slip).Not().ToContainText(bc), "without Alex Reader's %s", bc)
		}
		checkA11y(t, page, "Checkin receipt: one patron's, with the others'")
		must(t, page.GetByRole(*playwright.AriaRoleLink, playwright.PageGetByRoleOptions{Name: "Alex Reader (P0001)"}).Click(), "opening Alex Reader's receipt")
		must(t, expect.Locator(slip).ToContainText("Alex Reader (P0001)"), "Alex Reader's receipt")
		for _, bc := range copies[:2] {
			must(t, expect.Locator(slip).ToContainText(bc), "with %s", bc)
		}
		must(t, expect.Locator(slip).Not().ToContainText(copies[2]), "without Casey Waiting's return")
	})

	t.Run("NoScript", func(t *testing.T) {
		srv := startServer(t)
		lib := openLibraryDB(t, srv)
		f := newCheckinFixture(t, lib)
		page, _ := newPage(t, browser, playwright.BrowserNewContextOptions{JavaScriptEnabled: playwright.Bool(false)})
		_, err := page.Goto(srv.BaseURL + "/checkin")
		must(t, err, "opening Check in")
		login(t, page, "desk", "desk")
		d := &desk{srv: srv, page: page}
		for _, bc := range []string{f.shelf, f.east, f.plain[0]} {
			d.scan(t, "Barcode", bc)
			must(t, expect.Page(page).ToHaveURL(regexp.MustCompile(`/checkin\?scan=\d+$`)), "Check in answers %s", bc)
		}
		messages := page.Locator("#desk-messages section")
		must(t, expect.Locator(messages).ToHaveCount(2), "two messages")
		ack := messages.Filter(playwright.LocatorFilterOptions{HasText: f.east}).GetByRole(*playwright.AriaRoleButton, playwright.LocatorGetByRoleOptions{Name: "Acknowledge"})
		must(t, ack.Click(), "acknowledging the transfer")
		must(t, expect.Page(page).ToHaveURL(onCheckinPage), "back on Check in")
		must(t, expect.Locator(messages).ToHaveCount(1), "one message")
		must(t, expect.Locator(messages).ToContainText("Hold found"), "the hold found stays")
		if n := lib.acknowledged(f.east); n != 1 {
			t.Errorf("%s acknowledged %d times in the database, want 1", f.east, n)
		}
	})
}
