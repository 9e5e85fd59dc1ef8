package e2e

import (
	"context"
	"fmt"
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
