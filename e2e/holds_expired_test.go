package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"

	"github.com/stacks-ils/stacks/db"
)

// exec runs statements on the library, for a test's fixtures.
func (l *libraryDB) exec(query string, args ...any) {
	l.t.Helper()
	err := l.d.Write(context.Background(), func(tx *db.Tx) error {
		_, err := tx.Exec(query, args...)
		return err
	})
	if err != nil {
		l.t.Fatalf("%s: %v", query, err)
	}
}

// value reads one value of the library as text.
func (l *libraryDB) value(query string, args ...any) string {
	l.t.Helper()
	var s string
	err := l.d.Read(context.Background(), func(tx *db.Tx) error {
		return tx.QueryRow(query, args...).Scan(&s)
	})
	if err != nil {
		l.t.Fatalf("%s: %v", query, err)
	}
	return s
}

// TestExpiredHoldAtCheckin: staff clear the hold shelf by scanning. A copy whose
// hold was not collected in time ends that hold, and the desk's row says so and
// where the copy goes now: to the next hold ("Hold found") or back to the shelf.
// Then the pull list asks one branch for a hold's copy, the pickup branch first,
// and "Not on shelf" passes the request on to the other branch.
func TestExpiredHoldAtCheckin(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	browser := launchBrowser(t)
	page := newA11yPage(t, browser)
	lib := openLibraryDB(t, srv)

	// Casey Waiting's holds on I00002 and I00004 waited at Central until
	// yesterday; Alex Reader queues for I00002's title behind. Blake Owing holds
	// I00005's title, on the shelf at Central and, as I00005E, at Eastside.
	past := db.FormatTime(time.Now().Add(-24 * time.Hour))
	for _, b := range []string{"I00002", "I00004"} {
		lib.exec(`INSERT INTO holds (record_id, patron_id, pickup_branch_id, placed_at, priority, status, trapped_item_id, waiting_since, pickup_by)
			SELECT i.record_id, p.id, b.id, ?, 0, 'waiting', i.id, ?, ? FROM items i, patrons p, branches b
			WHERE i.barcode = ? AND p.card = 'P0003' AND b.code = 'CEN'`, past, past, past, b)
		lib.exec(`UPDATE items SET status = 'on_hold_shelf' WHERE barcode = ?`, b)
	}
	now := db.FormatTime(time.Now().Add(-time.Hour))
	lib.exec(`INSERT INTO holds (record_id, patron_id, pickup_branch_id, placed_at, priority, status)
		SELECT i.record_id, p.id, b.id, ?, 1, 'queued' FROM items i, patrons p, branches b
		WHERE i.barcode = 'I00002' AND p.card = 'P0001' AND b.code = 'CEN'`, now)
	lib.exec(`INSERT INTO items (barcode, record_id, home_branch_id, current_branch_id, item_type_id, call_number, status, created_at, updated_at)
		SELECT 'I00005E', i.record_id, b.id, b.id, i.item_type_id, i.call_number, 'available', i.created_at, i.updated_at FROM items i, branches b
		WHERE i.barcode = 'I00005' AND b.code = 'EAS'`)
	lib.exec(`INSERT INTO holds (record_id, patron_id, pickup_branch_id, placed_at, priority, status)
		SELECT i.record_id, p.id, b.id, ?, 1, 'queued' FROM items i, patrons p, branches b
		WHERE i.barcode = 'I00005' AND p.card = 'P0002' AND b.code = 'CEN'`, now)

	_, err := page.Goto(srv.BaseURL + "/")
	must(t, err, "opening the staff site")
	login(t, page, "desk", "desk")
	must(t, navLink(page, "Check in").Click(), "clicking Check in")
	d := &desk{srv: srv, page: page}
	row := func(barcode string) playwright.Locator {
		return page.Locator(`table.checkin-list tbody tr[data-scan="` + barcode + `"]`)
	}

	d.scan(t, "Barcode", "I00002")
	must(t, expect.Locator(row("I00002")).ToContainText("Hold for Casey Waiting expired on"), "the row says the hold expired")
	must(t, expect.Locator(row("I00002")).ToContainText("ended. The copy fills the next hold."), "the row says the copy fills the next hold")
	must(t, expect.Locator(row("I00002")).ToContainText("Hold found for Alex Reader"), "the next hold found")
	must(t, expect.Locator(page.Locator("section.hold-found")).ToContainText("Alex Reader"), "the Hold found banner for the next hold")
	checkA11y(t, page, "Check in: an expired hold, the next hold found")
	for card, want := range map[string]string{"P0003": "expired", "P0001": "waiting"} {
		if got := lib.value(`SELECT h.status FROM holds h JOIN patrons p ON p.id = h.patron_id
			WHERE p.card = ? AND h.trapped_item_id = (SELECT id FROM items WHERE barcode = 'I00002')`, card); got != want {
			t.Errorf("%s's hold on I00002 is %s, want %s", card, got, want)
		}
	}

	d.scan(t, "Barcode", "I00004")
	must(t, expect.Locator(row("I00004")).ToContainText("Hold for Casey Waiting expired on"), "the row says the hold expired")
	must(t, expect.Locator(row("I00004")).ToContainText("No other hold wants it: back to the shelf."), "the row says back to the shelf")
	checkA11y(t, page, "Check in: an expired hold, back to the shelf")
	if got := lib.value(`SELECT i.status || ' ' || h.status FROM items i JOIN holds h ON h.trapped_item_id = i.id WHERE i.barcode = 'I00004'`); got != "available expired" {
		t.Errorf("I00004 and its hold: %q, want available and expired", got)
	}

	// The pull list: Central, the pickup branch, is asked; Eastside is not.
	pull := page.Locator("table.pull-list")
	_, err = page.Goto(srv.BaseURL + "/holds?branch=EAS")
	must(t, err, "opening Eastside's Holds page")
	must(t, expect.Locator(page.GetByRole(*playwright.AriaRoleHeading, playwright.PageGetByRoleOptions{Name: "Pull list"})).ToBeVisible(), "Eastside's pull list")
	must(t, expect.Locator(page.Locator("main")).Not().ToContainText("I00005E"), "Eastside not asked for I00005E")
	_, err = page.Goto(srv.BaseURL + "/holds?branch=CEN")
	must(t, err, "opening Central's Holds page")
	must(t, expect.Locator(pull).ToContainText("I00005"), "Central asked for I00005")
	checkA11y(t, page, "Holds: pull list with Not on shelf")
	must(t, button(page, "Not on shelf: I00005").Click(), "clicking Not on shelf")
	must(t, expect.Locator(page.GetByText("I00005 is marked missing")).ToBeVisible(), "the message")
	checkA11y(t, page, "Holds: a copy not on the shelf")
	if got := lib.value(`SELECT status FROM items WHERE barcode = 'I00005'`); got != "missing" {
		t.Errorf("I00005 is %s, want missing", got)
	}
	_, err = page.Goto(srv.BaseURL + "/holds?branch=EAS")
	must(t, err, "opening Eastside's Holds page")
	must(t, expect.Locator(pull).ToContainText("I00005E"), "Eastside asked for I00005E now")
	must(t, expect.Locator(pull).ToContainText("Blake Owing"), "for Blake Owing's hold")
}
