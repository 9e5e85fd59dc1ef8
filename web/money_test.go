package web_test

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

// TestMoneyDesk walks the ledger at the desk through the staff site: declare a
// loan lost, pay the chosen line by card, print its receipt, check the item in (its
// message and statements), refund the credit, and see both in the cash-up.
func TestMoneyDesk(t *testing.T) {
	e := newDemoEnv(t)
	c := e.deskClient(t)
	e.exec(t, `UPDATE items SET price_cents = 2500 WHERE barcode = 'I00003'`)
	e.exec(t, `UPDATE circ_rules SET processing_fee_cents = 500, lost_return = 'refund', lost_return_fee = 'kept'`)
	e.post(t, c, "/checkout/patron", url.Values{"card": {"P0001"}})
	e.post(t, c, "/checkout", url.Values{"barcode": {"I00003"}})
	patron := e.patronPath(t, "P0001")
	loan := e.count(t, `SELECT l.id FROM loans l JOIN items i ON i.id = l.item_id WHERE i.barcode = 'I00003' AND l.returned_at IS NULL`)

	r := e.get(t, c, patron)
	if !strings.Contains(r.Body, ">Declare lost</button>") || !strings.Contains(r.Body, ">Claims returned</button>") {
		t.Fatal("the patron's loans offer no Declare lost or Claims returned")
	}
	// Declare lost asks first, with the amount; only Confirm bills.
	r = e.post(t, c, patron+"/lost", url.Values{"loan_id": {strconv.Itoa(loan)}})
	if r.Status != http.StatusOK || !strings.Contains(r.Body, "Declare I00003 lost and bill 30.00 (replacement 25.00 + processing 5.00)?") {
		t.Fatalf("declare lost asks no confirmation with the amount: %d\n%s", r.Status, r.Body)
	}
	if n := e.count(t, `SELECT count(*) FROM ledger WHERE loan_id = ?`, loan); n != 0 {
		t.Fatalf("the confirmation page billed %d lines", n)
	}
	// A confirmation of another amount (the price changed since) asks again.
	r = e.post(t, c, patron+"/lost", url.Values{"loan_id": {strconv.Itoa(loan)}, "confirm": {"1"}, "billed": {"2999"}})
	if r.Status != http.StatusConflict || !strings.Contains(r.Body, "is 30.00 now, not the 29.99 confirmed") || !strings.Contains(r.Body, `name="billed" value="3000"`) {
		t.Fatalf("a confirmation of an old amount: %d\n%s", r.Status, r.Body)
	}
	if n := e.count(t, `SELECT count(*) FROM ledger WHERE loan_id = ?`, loan); n != 0 {
		t.Fatalf("a confirmation of an old amount billed %d lines", n)
	}
	r = e.post(t, c, patron+"/lost", url.Values{"loan_id": {strconv.Itoa(loan)}, "confirm": {"1"}, "billed": {"3000"}})
	if r.Status != http.StatusSeeOther {
		t.Fatalf("declare lost: %d\n%s", r.Status, r.Body)
	}
	r = e.get(t, c, patron)
	for _, want := range []string{"declared lost: billed 30.00", "Lost item", "Processing fee", "30.00</strong> owed", `name="line"`} {
		if !strings.Contains(r.Body, want) {
			t.Errorf("the patron page after declaring lost does not show %q", want)
		}
	}
	lost := e.count(t, `SELECT id FROM ledger WHERE loan_id = ? AND kind = 'lost'`, loan)

	// More than the chosen line owes is refused beside the amount.
	r = e.post(t, c, patron+"/pay", url.Values{"amount": {"26.00"}, "method": {"card"}, "line": {strconv.Itoa(lost)}})
	if r.Status != http.StatusUnprocessableEntity || !strings.Contains(r.Body, "owes on the chosen lines 25.00") {
		t.Fatalf("overpaying a line: %d", r.Status)
	}
	r = e.post(t, c, patron+"/pay", url.Values{"amount": {"25.00"}, "method": {"card"}, "line": {strconv.Itoa(lost)}})
	if r.Status != http.StatusSeeOther {
		t.Fatalf("pay: %d\n%s", r.Status, r.Body)
	}
	payment := e.count(t, `SELECT max(id) FROM ledger WHERE kind = 'payment'`)
	r = e.get(t, c, "/receipts/"+strconv.Itoa(payment))
	for _, want := range []string{"Payment receipt", "Card", "Lost: ", "25.00", "Balance after this payment:", "5.00 owed"} {
		if !strings.Contains(r.Body, want) {
			t.Errorf("the receipt does not show %q", want)
		}
	}

	r = e.post(t, c, "/checkin", url.Values{"barcode": {"I00003"}})
	if r.Status != http.StatusSeeOther {
		t.Fatalf("checkin: %d", r.Status)
	}
	t.Logf("POST /checkin of a lost item: %d SQL statements", sqlCount(t, r))
	r = e.get(t, c, "/checkin")
	if !strings.Contains(r.Body, "Lost item returned: 25.00 refunded to Alex Reader&#39;s account as credit and 5.00 still charged.") {
		t.Errorf("the check-in does not tell what the return did:\n%s", r.Body)
	}
	// A normal return after it: the hot path is unchanged.
	e.post(t, c, "/checkout/patron", url.Values{"card": {"P0001"}})
	e.post(t, c, "/checkout", url.Values{"barcode": {"I00004"}})
	r = e.post(t, c, "/checkin", url.Values{"barcode": {"I00004"}})
	if n := sqlCount(t, r); n > 8 {
		t.Errorf("POST /checkin of an ordinary loan ran %d SQL statements, want at most 8 (as before lost items)", n)
	} else {
		t.Logf("POST /checkin of an ordinary loan: %d SQL statements", n)
	}

	// 25.00 - 5.00 = 20.00 in credit: an administrator refunds it in cash.
	// Circulation staff are not offered the refund, and are refused it.
	r = e.get(t, c, patron)
	if !strings.Contains(r.Body, "20.00</strong> in credit") || strings.Contains(r.Body, "Refund credit") {
		t.Fatal("the desk's patron page shows no credit, or offers a refund to circulation staff")
	}
	if r := e.post(t, c, patron+"/refund", url.Values{"amount": {"20.00"}, "method": {"cash"}}); r.Status != http.StatusForbidden {
		t.Fatalf("refund by circulation staff: %d, want 403", r.Status)
	}
	admin := e.adminClient(t)
	r = e.get(t, admin, patron)
	if !strings.Contains(r.Body, "Refund credit") {
		t.Fatal("the patron page offers an administrator no refund")
	}
	r = e.post(t, admin, patron+"/refund", url.Values{"amount": {"20.00"}, "method": {"cash"}})
	if r.Status != http.StatusSeeOther {
		t.Fatalf("refund: %d\n%s", r.Status, r.Body)
	}

	// The payment's receipt, reprinted after the return and the refund, still
	// shows the balance just after that payment, not today's.
	r = e.get(t, c, "/receipts/"+strconv.Itoa(payment))
	if !strings.Contains(r.Body, "5.00 owed") || strings.Contains(r.Body, "nothing owed") {
		t.Errorf("the reprinted receipt shows a balance other than the one after its payment")
	}
	refund := e.count(t, `SELECT max(id) FROM ledger WHERE kind = 'refund'`)
	r = e.get(t, c, "/receipts/"+strconv.Itoa(refund))
	if !strings.Contains(r.Body, "Balance after this refund:") || !strings.Contains(r.Body, "nothing owed") {
		t.Errorf("the refund's receipt does not show the balance after it")
	}

	r = e.get(t, c, "/cashup")
	for _, want := range []string{"Cash-up: Central", "25.00", "20.00", "Refund", "5.00</strong>"} {
		if !strings.Contains(r.Body, want) {
			t.Errorf("the cash-up does not show %q", want)
		}
	}
	if r := e.get(t, c, "/cashup?day=2001-01-01&branch=CEN"); r.Status != 200 || !strings.Contains(r.Body, "No payments or refunds") {
		t.Errorf("an empty day: %d", r.Status)
	}
	if r := e.get(t, c, "/cashup?day=yesterday"); r.Status != http.StatusBadRequest && r.Status != http.StatusUnprocessableEntity {
		t.Errorf("a malformed day: %d", r.Status)
	}

	// A manual charge of a configured type, at its default.
	r = e.post(t, c, patron+"/charge", url.Values{"type": {"CARD"}, "amount": {""}, "note": {""}})
	if r.Status != http.StatusSeeOther {
		t.Fatalf("charge: %d\n%s", r.Status, r.Body)
	}
	if got := e.count(t, `SELECT amount_cents FROM ledger WHERE kind = 'manual' AND charge_type = 'CARD'`); got != 200 {
		t.Errorf("manual charge %d, want the default 200", got)
	}
}

// TestClaimsReturnedPages: a claim from the patron's loans shows in the patron's
// count and on the claims list, by branch.
func TestClaimsReturnedPages(t *testing.T) {
	e := newDemoEnv(t)
	c := e.deskClient(t)
	e.post(t, c, "/checkout/patron", url.Values{"card": {"P0001"}})
	e.post(t, c, "/checkout", url.Values{"barcode": {"I00005"}})
	patron := e.patronPath(t, "P0001")
	loan := e.count(t, `SELECT l.id FROM loans l JOIN items i ON i.id = l.item_id WHERE i.barcode = 'I00005' AND l.returned_at IS NULL`)
	if r := e.post(t, c, patron+"/claim-returned", url.Values{"loan_id": {strconv.Itoa(loan)}}); r.Status != http.StatusSeeOther {
		t.Fatalf("claim: %d", r.Status)
	}
	r := e.get(t, c, patron)
	if !strings.Contains(r.Body, "<dt>Claims returned</dt><dd>1</dd>") || !strings.Contains(r.Body, "claimed returned") {
		t.Error("the patron page does not show the claim")
	}
	if r := e.get(t, c, "/claims-returned?branch=CEN"); !strings.Contains(r.Body, "I00005") {
		t.Error("the claims list of Central does not show I00005")
	}
	if r := e.get(t, c, "/claims-returned?branch=EAS"); strings.Contains(r.Body, "I00005") {
		t.Error("the claims list of Eastside shows a Central loan")
	}
	// Found: the claim is closed. Open claims no longer list it; all claims do.
	if r := e.post(t, c, "/checkin", url.Values{"barcode": {"I00005"}}); r.Status != http.StatusSeeOther {
		t.Fatalf("checkin: %d", r.Status)
	}
	if r := e.get(t, c, "/claims-returned?branch=CEN"); strings.Contains(r.Body, "I00005") || !strings.Contains(r.Body, "No open claims") {
		t.Error("the open claims of Central still show the found item")
	}
	if r := e.get(t, c, "/claims-returned?branch=CEN&status=all"); !strings.Contains(r.Body, "I00005") || !strings.Contains(r.Body, "<th scope=\"col\">Found</th>") {
		t.Error("all claims of Central do not show the closed claim")
	}
	if r := e.get(t, c, "/claims-returned?page=0"); r.Status != http.StatusBadRequest && r.Status != http.StatusUnprocessableEntity {
		t.Errorf("page 0: %d", r.Status)
	}
	// Another patron's loan id is refused.
	other := e.patronPath(t, "P0003")
	if r := e.post(t, c, other+"/lost", url.Values{"loan_id": {strconv.Itoa(loan)}, "confirm": {"1"}, "billed": {"0"}}); r.Status != http.StatusSeeOther {
		t.Fatalf("declaring another patron's loan lost: %d", r.Status)
	}
	if n := e.count(t, `SELECT count(*) FROM loans WHERE id = ? AND lost_at IS NOT NULL`, loan); n != 0 {
		t.Error("a loan was declared lost from another patron's page")
	}
}

// TestLostCheckoutOverrideDesk: lending a lost item to another patron says
// before that the first borrower's lost bill will be reversed, and after, on the
// done row, what the reversal did.
func TestLostCheckoutOverrideDesk(t *testing.T) {
	e := newDemoEnv(t)
	c := e.deskClient(t)
	e.exec(t, `UPDATE items SET price_cents = 2500 WHERE barcode = 'I00003'`)
	e.exec(t, `UPDATE circ_rules SET processing_fee_cents = 0, lost_return = 'refund'`)
	e.post(t, c, "/checkout/patron", url.Values{"card": {"P0001"}})
	e.post(t, c, "/checkout", url.Values{"barcode": {"I00003"}})
	patron := e.patronPath(t, "P0001")
	loan := e.count(t, `SELECT l.id FROM loans l JOIN items i ON i.id = l.item_id WHERE i.barcode = 'I00003' AND l.returned_at IS NULL`)
	if r := e.post(t, c, patron+"/lost", url.Values{"loan_id": {strconv.Itoa(loan)}, "confirm": {"1"}, "billed": {"2500"}}); r.Status != http.StatusSeeOther {
		t.Fatalf("declare lost: %d", r.Status)
	}
	e.post(t, c, "/checkout/done", url.Values{})
	e.post(t, c, "/checkout/patron", url.Values{"card": {"P0003"}})
	r := e.post(t, c, "/checkout", url.Values{"barcode": {"I00003"}})
	if r.Status != http.StatusConflict || !strings.Contains(r.Body, "their lost bill will be reversed") {
		t.Fatalf("the override does not say the lost bill will be reversed: %d\n%s", r.Status, r.Body)
	}
	r = e.post(t, c, "/checkout", url.Values{"barcode": {"I00003"}, "confirm": {"on_loan", "lost"}})
	if r.Status != http.StatusOK && r.Status != http.StatusSeeOther {
		t.Fatalf("confirmed checkout: %d\n%s", r.Status, r.Body)
	}
	if r.Status == http.StatusSeeOther {
		r = e.get(t, c, "/checkout")
	}
	if !strings.Contains(r.Body, "Lost item returned: 25.00 unpaid cancelled.") {
		t.Errorf("the desk is not told what the reversal did:\n%s", r.Body)
	}
}

// TestWaivePermissionDesk: an administrator gives the desk account the waive
// permission on the staff page (a checkbox); the desk then waives part of the
// line it ticks, recorded against that line only; without the permission again,
// it is refused. A refused payment shows the error summary at the top.
func TestWaivePermissionDesk(t *testing.T) {
	e := newDemoEnv(t)
	c := e.deskClient(t)
	admin := e.adminClient(t)
	page := e.patronPath(t, "P0002")
	deskID := strconv.Itoa(e.count(t, `SELECT id FROM staff_users WHERE username = 'desk'`))
	lines := func() (oldest, newest int) {
		return e.count(t, `SELECT min(g.id) FROM ledger g JOIN patrons p ON p.id = g.patron_id WHERE p.card = 'P0002' AND g.kind = 'overdue'`),
			e.count(t, `SELECT max(g.id) FROM ledger g JOIN patrons p ON p.id = g.patron_id WHERE p.card = 'P0002' AND g.kind = 'overdue'`)
	}
	oldest, newest := lines()

	r := e.get(t, admin, "/admin/staff")
	mustContain(t, "the staff page", r.Body, `id="can_waive_`+deskID+`"`, "May waive fines", "Always (administrator)")
	if r := e.post(t, admin, "/admin/staff/"+deskID+"/waive", url.Values{"can_waive": {"1"}}); r.Status != http.StatusSeeOther {
		t.Fatalf("grant: %d", r.Status)
	}
	if e.count(t, `SELECT can_waive FROM staff_users WHERE id = ?`, deskID) != 1 {
		t.Fatal("the checkbox did not give the permission")
	}
	if n := e.count(t, `SELECT count(*) FROM audit_log WHERE action = 'staff.waive_grant' AND object_id = ?`, deskID); n != 1 {
		t.Errorf("%d audit entries of the grant, want 1", n)
	}
	if r := e.post(t, c, "/admin/staff/"+deskID+"/waive", url.Values{"can_waive": {"1"}}); r.Status != http.StatusForbidden {
		t.Errorf("the desk set its own permission: %d", r.Status)
	}

	r = e.get(t, c, page)
	mustContain(t, "the desk's patron page", r.Body, page+`/waive"`, `id="waive-line-`+strconv.Itoa(newest)+`"`)
	r = e.post(t, c, page+"/waive", url.Values{"line": {strconv.Itoa(newest)}, "amount": {"1.00"}, "reason": {"Book drop jammed"}})
	if r.Status != http.StatusSeeOther {
		t.Fatalf("waive by the desk with the permission: %d\n%s", r.Status, r.Body)
	}
	waiver := e.count(t, `SELECT max(id) FROM ledger WHERE kind = 'waiver'`)
	if got := e.count(t, `SELECT coalesce(sum(amount_cents), 0) FROM ledger_allocations WHERE payment_id = ? AND charge_id = ?`, waiver, newest); got != 100 {
		t.Errorf("the waiver allocated %d to the chosen line, want 100", got)
	}
	if got := e.count(t, `SELECT count(*) FROM ledger_allocations WHERE charge_id = ?`, oldest); got != 0 || oldest == newest {
		t.Errorf("the oldest line has %d allocations after a waiver of another line", got)
	}

	// A refused payment: the summary heads the page, linked to the field, and
	// the amount keeps what was typed.
	r = e.post(t, c, page+"/pay", url.Values{"amount": {"99.00"}, "method": {"cash"}})
	if r.Status != http.StatusUnprocessableEntity {
		t.Fatalf("pay too much: %d", r.Status)
	}
	if i, j := strings.Index(r.Body, `id="error-summary"`), strings.Index(r.Body, "<h1>"); i < 0 || i > j {
		t.Errorf("the error summary is not above the heading (%d, %d)", i, j)
	}
	mustContain(t, "the refused payment", r.Body, `role="alert"`, "The payment was not recorded", `href="#pay_amount"`, `value="99.00"`)

	// The checkbox unticked: the desk is refused again.
	if r := e.post(t, admin, "/admin/staff/"+deskID+"/waive", url.Values{}); r.Status != http.StatusSeeOther {
		t.Fatalf("revoke: %d", r.Status)
	}
	if n := e.count(t, `SELECT count(*) FROM audit_log WHERE action = 'staff.waive_revoke' AND object_id = ?`, deskID); n != 1 {
		t.Errorf("%d audit entries of the revocation, want 1", n)
	}
	r = e.post(t, c, page+"/waive", url.Values{"line": {strconv.Itoa(newest)}, "amount": {"1.00"}, "reason": {"again"}})
	if r.Status != http.StatusForbidden || e.count(t, `SELECT max(id) FROM ledger WHERE kind = 'waiver'`) != waiver {
		t.Errorf("waive after the permission was taken away: %d", r.Status)
	}
}
