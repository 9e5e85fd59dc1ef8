package e2e

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"testing"

	"github.com/playwright-community/playwright-go"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/patrons"
)

// balance is what a patron owes, through the ledger.
func (l *libraryDB) balance(card string) int64 {
	l.t.Helper()
	p := l.patron(card)
	var cents int64
	err := l.d.Read(context.Background(), func(tx *db.Tx) (err error) {
		cents, err = patrons.Balance(tx, p.ID)
		return err
	})
	if err != nil {
		l.t.Fatal(err)
	}
	return cents
}

// TestLostItemDesk: staff lend an item, declare the loan lost from the patron's
// loans and see the bill, take the payment, then the item turns up: its check-in
// (scanned into the focused Barcode field, Enter) tells the desk the replacement
// cost was refunded, and the patron page shows the credit.
func TestLostItemDesk(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	page, _ := newBrowser(t)
	lib := openLibraryDB(t, srv)
	d := &desk{srv: srv, page: page}
	const card, barcode = "P0001", "I00001"
	before := lib.balance(card)

	_, err := page.Goto(srv.BaseURL + "/")
	must(t, err, "opening the staff site")
	login(t, page, "desk", "desk")
	must(t, navLink(page, "Check out").Click(), "clicking Check out")
	must(t, expect.Locator(d.field("Card number")).ToBeFocused(), "the Card number field has focus")
	d.scan(t, "Card number", card)
	must(t, expect.Locator(d.field("Barcode")).ToBeFocused(), "the Barcode field has focus")
	d.scan(t, "Barcode", barcode)
	row := page.Locator("table.visit-list tbody tr").Filter(playwright.LocatorFilterOptions{HasText: barcode})
	must(t, expect.Locator(row).ToHaveAttribute("data-outcome", "done"), "%s checked out", barcode)

	// The patron's page: declare the loan lost.
	p := lib.patron(card)
	_, err = page.Goto(srv.BaseURL + "/patrons/" + strconv.FormatInt(p.ID, 10))
	must(t, err, "opening the patron page")
	must(t, page.GetByRole(*playwright.AriaRoleButton, playwright.PageGetByRoleOptions{Name: "Declare lost: Pride and Prejudice"}).Click(), "clicking Declare lost")
	must(t, button(page, "Confirm").Click(), "confirming the bill")
	must(t, expect.Locator(page.GetByText("declared lost: billed")).ToBeVisible(), "the bill is confirmed")
	bill := lib.balance(card) - before
	if bill <= 0 {
		t.Fatalf("declaring the loan lost billed %d", bill)
	}
	amount := stacks.FormatMoney(bill)
	ledger := page.Locator("table.patron-ledger")
	must(t, expect.Locator(ledger).ToContainText("Lost item"), "the ledger shows the lost item")
	must(t, expect.Locator(ledger).ToContainText(amount), "the ledger shows the bill of %s", amount)
	must(t, expect.Locator(page.Locator("table.loans")).ToContainText("lost"), "the loan shows lost")

	// The patron pays the bill in cash.
	must(t, d.field("Amount paid").Fill(stacks.FormatMoney(lib.balance(card))), "typing the amount")
	_, err = d.field("Payment method").SelectOption(playwright.SelectOptionValues{Values: &[]string{"cash"}})
	must(t, err, "choosing cash")
	must(t, button(page, "Pay").Click(), "clicking Pay")
	must(t, expect.Locator(page.GetByText("Payment of")).ToBeVisible(), "the payment is confirmed")
	if got := lib.balance(card); got != 0 {
		t.Fatalf("balance %d after paying everything", got)
	}

	// The item turns up: check it in.
	must(t, navLink(page, "Check in").Click(), "clicking Check in")
	must(t, expect.Page(page).ToHaveURL(onCheckinPage), "on the Check in page")
	must(t, expect.Locator(d.field("Barcode")).ToBeFocused(), "the Barcode field has focus")
	d.scan(t, "Barcode", barcode)
	row = page.Locator("table.checkin-list tbody tr").Filter(playwright.LocatorFilterOptions{HasText: barcode})
	want := fmt.Sprintf("Lost item returned: %s refunded to Alex Reader's account as credit", amount)
	must(t, expect.Locator(row).ToContainText(want), "the check-in says %q", want)
	if got := lib.balance(card); got != -bill {
		t.Errorf("balance %d after the return, want %d (the bill in credit)", got, -bill)
	}
	if st := lib.itemStatus(barcode); st != "available" {
		t.Errorf("%s is %s after its return", barcode, st)
	}

	// The patron page shows the credit; refunds are for administrators, so the
	// desk is not offered one, and an administrator hands it back.
	_, err = page.Goto(srv.BaseURL + "/patrons/" + strconv.FormatInt(p.ID, 10))
	must(t, err, "opening the patron page again")
	must(t, expect.Locator(page.Locator(".patron-balance")).ToContainText(amount+" in credit"), "the credit is shown")
	must(t, expect.Locator(button(page, "Refund")).ToHaveCount(0), "no Refund button for circulation staff")
	must(t, button(page, "Log out").Click(), "clicking Log out")
	login(t, page, "admin", "admin")
	must(t, expect.Locator(button(page, "Log out")).ToBeVisible(), "signed in as admin")
	_, err = page.Goto(srv.BaseURL + "/patrons/" + strconv.FormatInt(p.ID, 10))
	must(t, err, "opening the patron page as admin")
	must(t, button(page, "Refund").Click(), "clicking Refund")
	must(t, expect.Locator(page.GetByText("Refund of "+amount)).ToBeVisible(), "the refund is confirmed")
	if got := lib.balance(card); got != 0 {
		t.Errorf("balance %d after the refund", got)
	}
}

// int reads one number from the server's database.
func (l *libraryDB) int(query string, args ...any) int64 {
	l.t.Helper()
	var n int64
	if err := l.d.Read(context.Background(), func(tx *db.Tx) error { return tx.QueryRow(query, args...).Scan(&n) }); err != nil {
		l.t.Fatalf("%s: %v", query, err)
	}
	return n
}

// owed is what each open line of a patron still owes, by line id.
func (l *libraryDB) owed(card string) map[int64]int64 {
	l.t.Helper()
	p := l.patron(card)
	out := map[int64]int64{}
	err := l.d.Read(context.Background(), func(tx *db.Tx) error {
		open, _, err := patrons.OpenCharges(tx, p.ID)
		for _, c := range open {
			out[c.ID] = c.OutstandingCents
		}
		return err
	})
	if err != nil {
		l.t.Fatal(err)
	}
	return out
}

// TestMoneyAsStaffHandleIt: a desk account without the waive permission is not
// offered the waive form; a refused payment heads the page with its error, which
// has focus, the amount as typed; an administrator ticks "May waive fines" for
// the desk account, which then waives the line it chose (the others untouched,
// checked in the database); "Declare lost" asks first with the amount, Cancel
// bills nothing and Confirm bills the amount shown. Axe-core checks each new
// state.
func TestMoneyAsStaffHandleIt(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	page := newA11yPage(t, launchBrowser(t))
	lib := openLibraryDB(t, srv)
	d := &desk{srv: srv, page: page}
	lib.exec(`UPDATE items SET price_cents = 1000 WHERE barcode = 'I00003'`)
	lib.exec(`UPDATE circ_rules SET processing_fee_cents = 299`)
	owing := lib.patron("P0002")
	owingPage := srv.BaseURL + "/patrons/" + strconv.FormatInt(owing.ID, 10)
	newest := lib.int(`SELECT max(id) FROM ledger WHERE patron_id = ? AND kind = 'overdue'`, owing.ID)
	before := lib.owed("P0002")
	if len(before) < 2 {
		t.Fatalf("P0002 owes on %d lines, want at least 2", len(before))
	}

	_, err := page.Goto(srv.BaseURL + "/")
	must(t, err, "opening the staff site")
	login(t, page, "desk", "desk")
	must(t, expect.Locator(button(page, "Log out")).ToBeVisible(), "signed in as desk")

	// Without the permission: no waive form, but whom to ask.
	_, err = page.Goto(owingPage)
	must(t, err, "opening P0002's page")
	must(t, expect.Locator(button(page, "Waive")).ToHaveCount(0), "no Waive button for the desk without the permission")
	must(t, expect.Locator(page.GetByText("Waiving fines needs the waive permission")).ToBeVisible(), "the page says whom to ask")

	// A refused payment: the error at the top, focused; the amount as typed.
	must(t, d.field("Amount paid").Fill("99.00"), "typing too much")
	_, err = d.field("Payment method").SelectOption(playwright.SelectOptionValues{Values: &[]string{"cash"}})
	must(t, err, "choosing cash")
	must(t, button(page, "Pay").Click(), "clicking Pay")
	summary := page.Locator("#error-summary")
	must(t, expect.Locator(summary).ToContainText("The payment was not recorded"), "the error summary heads the page")
	must(t, expect.Locator(summary).ToHaveAttribute("role", "alert"), "the summary is an alert")
	must(t, expect.Locator(summary).ToBeFocused(), "the error summary has focus")
	must(t, expect.Locator(summary).ToBeInViewport(), "the error summary is on the screen")
	must(t, expect.Locator(d.field("Amount paid")).ToHaveValue("99.00"), "the amount keeps what was typed")
	if got := lib.balance("P0002"); got != sumOwed(before) {
		t.Errorf("balance %d after a refused payment, want %d", got, sumOwed(before))
	}
	checkA11y(t, page, "Patron page: refused payment")
	// The summary's link goes to the field.
	must(t, summary.GetByRole(*playwright.AriaRoleLink).First().Click(), "following the summary's link")
	must(t, expect.Page(page).ToHaveURL(regexp.MustCompile(`#pay_amount$`)), "the link goes to the amount")

	// An administrator gives the desk account the waive permission.
	must(t, button(page, "Log out").Click(), "clicking Log out")
	login(t, page, "admin", "admin")
	must(t, expect.Locator(button(page, "Log out")).ToBeVisible(), "signed in as admin")
	_, err = page.Goto(srv.BaseURL + "/admin/staff")
	must(t, err, "opening Administration, Staff")
	must(t, page.GetByLabel("May waive fines for desk").Check(), "ticking May waive fines for desk")
	must(t, button(page, "Save the waive permission of desk").Click(), "saving the permission")
	must(t, expect.Locator(page.GetByText("desk may waive fines now.")).ToBeVisible(), "the permission is saved")
	must(t, expect.Locator(page.GetByLabel("May waive fines for desk")).ToBeChecked(), "the checkbox stays ticked")
	if lib.int(`SELECT can_waive FROM staff_users WHERE username = 'desk'`) != 1 {
		t.Fatal("the desk account has no waive permission after the administrator saved it")
	}
	checkA11y(t, page, "Staff accounts: waive permission")

	// The desk waives the newest line, all it owes: the older lines are untouched.
	must(t, button(page, "Log out").Click(), "clicking Log out")
	login(t, page, "desk", "desk")
	must(t, expect.Locator(button(page, "Log out")).ToBeVisible(), "signed in as desk again")
	_, err = page.Goto(owingPage)
	must(t, err, "opening P0002's page again")
	must(t, expect.Locator(button(page, "Waive")).ToBeVisible(), "the desk is offered the waive form now")
	checkA11y(t, page, "Patron page: waive form with lines")
	must(t, page.Locator("#waive-line-"+strconv.FormatInt(newest, 10)).Check(), "ticking the newest line")
	must(t, d.field("Reason for waiving").Fill("Returned in the book drop"), "typing the reason")
	must(t, button(page, "Waive").Click(), "clicking Waive")
	must(t, expect.Locator(page.GetByText("Waived "+stacks.FormatMoney(before[newest])+".")).ToBeVisible(), "the waiver is confirmed")
	after := lib.owed("P0002")
	for id, cents := range before {
		switch {
		case id == newest && after[id] != 0:
			t.Errorf("the waived line %d still owes %d", id, after[id])
		case id != newest && after[id] != cents:
			t.Errorf("line %d owes %d after a waiver of line %d, want %d as before", id, after[id], newest, cents)
		}
	}
	waiver := lib.int(`SELECT max(id) FROM ledger WHERE kind = 'waiver' AND patron_id = ?`, owing.ID)
	if got := lib.int(`SELECT count(*) FROM ledger_allocations WHERE payment_id = ? AND charge_id <> ?`, waiver, newest); got != 0 {
		t.Errorf("the waiver is allocated to %d other lines", got)
	}

	// Declare lost asks first, with the amount.
	must(t, navLink(page, "Check out").Click(), "clicking Check out")
	must(t, expect.Locator(d.field("Card number")).ToBeFocused(), "the Card number field has focus")
	d.scan(t, "Card number", "P0001")
	must(t, expect.Locator(d.field("Barcode")).ToBeFocused(), "the Barcode field has focus")
	d.scan(t, "Barcode", "I00003")
	row := page.Locator("table.visit-list tbody tr").Filter(playwright.LocatorFilterOptions{HasText: "I00003"})
	must(t, expect.Locator(row).ToHaveAttribute("data-outcome", "done"), "I00003 checked out")
	reader := lib.patron("P0001")
	loan := lib.int(`SELECT l.id FROM loans l JOIN items i ON i.id = l.item_id WHERE i.barcode = 'I00003' AND l.returned_at IS NULL`)
	readerBefore := lib.balance("P0001")
	readerPage := srv.BaseURL + "/patrons/" + strconv.FormatInt(reader.ID, 10)
	declare := func() {
		t.Helper()
		_, err := page.Goto(readerPage)
		must(t, err, "opening P0001's page")
		loanRow := page.Locator("table.loans tbody tr").Filter(playwright.LocatorFilterOptions{HasText: "I00003"})
		must(t, loanRow.GetByRole(*playwright.AriaRoleButton, playwright.LocatorGetByRoleOptions{Name: "Declare lost"}).Click(), "clicking Declare lost")
		must(t, expect.Locator(page.GetByText("Declare I00003 lost and bill 12.99 (replacement 10.00 + processing 2.99)?")).ToBeVisible(),
			"the confirmation names the amount")
	}
	billed := func() int64 { return lib.int(`SELECT count(*) FROM ledger WHERE loan_id = ?`, loan) }
	declare()
	checkA11y(t, page, "Declare lost: confirmation")
	must(t, page.GetByRole(*playwright.AriaRoleLink, playwright.PageGetByRoleOptions{Name: "Cancel", Exact: playwright.Bool(true)}).Click(), "clicking Cancel")
	must(t, expect.Page(page).ToHaveURL(readerPage), "Cancel goes back to the patron page")
	if n, lost := billed(), lib.int(`SELECT count(*) FROM loans WHERE id = ? AND lost_at IS NOT NULL`, loan); n != 0 || lost != 0 {
		t.Fatalf("Cancel billed %d lines, lost %d", n, lost)
	}
	if got := lib.itemStatus("I00003"); got == "lost" {
		t.Errorf("I00003 is %s after Cancel", got)
	}
	declare()
	must(t, button(page, "Confirm").Click(), "clicking Confirm")
	must(t, expect.Locator(page.GetByText("declared lost: billed 12.99")).ToBeVisible(), "the bill is confirmed")
	if got := lib.balance("P0001") - readerBefore; got != 1299 {
		t.Errorf("Confirm billed %d, want the 12.99 shown", got)
	}
	if got := lib.itemStatus("I00003"); got != "lost" {
		t.Errorf("I00003 is %s after Confirm, want lost", got)
	}
}

func sumOwed(m map[int64]int64) (n int64) {
	for _, v := range m {
		n += v
	}
	return n
}
