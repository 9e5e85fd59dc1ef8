package circulation_test

import (
	"context"
	"testing"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/circulation"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/patrons"
)

// checkMoney fails the test on any violation of the circulation or ledger
// invariants that stacks check runs.
func (e *env) checkMoney() {
	e.tb.Helper()
	err := e.d.Read(context.Background(), func(tx *db.Tx) error {
		for _, check := range []func(*db.Tx) ([]stacks.Violation, error){circulation.Check, patrons.Check} {
			vs, err := check(tx)
			if err != nil {
				return err
			}
			for _, v := range vs {
				e.tb.Errorf("violation: %s", v)
			}
		}
		return nil
	})
	if err != nil {
		e.tb.Fatal(err)
	}
}

// pay takes a payment of cents for the chosen lines (none: oldest first).
func (e *env) pay(card string, cents int64, method string, lines ...int64) (int64, error) {
	var id int64
	err := e.d.Write(context.Background(), func(tx *db.Tx) (err error) {
		id, err = patrons.PayLines(tx, e.desk, patrons.PayRequest{PatronID: e.patronID(card), Cents: cents, Method: method, ChargeIDs: lines})
		return err
	})
	return id, err
}

// waive forgives cents of what the patron owes, on their open lines oldest
// first, as the desk's waiver of every line with an amount does.
func (e *env) waive(card string, cents int64, reason string) error {
	return e.d.Write(context.Background(), func(tx *db.Tx) error {
		open, _, err := patrons.OpenCharges(tx, e.patronID(card))
		if err != nil {
			return err
		}
		ids := make([]int64, len(open))
		for i, c := range open {
			ids[i] = c.ID
		}
		_, _, err = patrons.WaiveLines(tx, e.desk, patrons.WaiveRequest{PatronID: e.patronID(card), ChargeIDs: ids, Cents: cents, Reason: reason})
		return err
	})
}

// lineOf returns the id of the loan's ledger line of kind.
func (e *env) lineOf(loanID int64, kind string) int64 {
	e.tb.Helper()
	return e.queryInt(`SELECT id FROM ledger WHERE loan_id = ? AND kind = ?`, loanID, kind)
}

// TestDeclareLostBill: the bill is the item's price, else its type's default, plus
// the rule's processing fee; a zero part writes no line.
func TestDeclareLostBill(t *testing.T) {
	for _, tc := range []struct {
		name                      string
		price, typeDefault, fee   int64
		wantReplacement, wantProc int64
	}{
		{"ItemPrice", 2500, 1800, 500, 2500, 500},
		{"TypeDefault", 0, 1800, 0, 1800, 0},
		{"FeeOnly", 0, 0, 300, 0, 300},
		{"Nothing", 0, 0, 0, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.exec(`UPDATE items SET price_cents = ? WHERE barcode = 'I00001'`, tc.price)
			e.exec(`UPDATE item_types SET default_price_cents = ? WHERE id = (SELECT item_type_id FROM items WHERE barcode = 'I00001')`, tc.typeDefault)
			e.exec(`UPDATE circ_rules SET processing_fee_cents = ?`, tc.fee)
			loan := e.mustCheckout("P0001", "I00001").Loan
			bill, err := e.svc.DeclareLost(context.Background(), e.desk, e.patronID("P0001"), loan.ID)
			if err != nil {
				t.Fatal(err)
			}
			if bill.ReplacementCents != tc.wantReplacement || bill.ProcessingCents != tc.wantProc {
				t.Errorf("bill %+v, want replacement %d, processing %d", bill, tc.wantReplacement, tc.wantProc)
			}
			if got := e.balance("P0001"); got != tc.wantReplacement+tc.wantProc {
				t.Errorf("balance %d, want %d", got, tc.wantReplacement+tc.wantProc)
			}
			if got := e.queryInt(`SELECT count(*) FROM ledger WHERE loan_id = ? AND kind = 'lost'`, loan.ID); (got == 1) != (tc.wantReplacement > 0) {
				t.Errorf("%d lost lines", got)
			}
			if got := e.queryInt(`SELECT count(*) FROM ledger WHERE loan_id = ? AND kind = 'processing'`, loan.ID); (got == 1) != (tc.wantProc > 0) {
				t.Errorf("%d processing lines", got)
			}
			if s := e.itemStatus("I00001"); s != "lost" {
				t.Errorf("item %s, want lost", s)
			}
			if got := e.queryInt(`SELECT count(*) FROM notice_items WHERE trigger = 'lost_bill' AND object_id = ?`, loan.ID); (got == 1) != (bill.Total() > 0) {
				t.Errorf("%d lost bill notices for a bill of %d", got, bill.Total())
			}
			// Declaring it again bills nothing more.
			_, err = e.svc.DeclareLost(context.Background(), e.desk, e.patronID("P0001"), loan.ID)
			wantCode(t, err, stacks.ECONFLICT)
			if got := e.balance("P0001"); got != tc.wantReplacement+tc.wantProc {
				t.Errorf("balance after a second declaration %d", got)
			}
			e.checkMoney()
		})
	}
}

// TestLostReturn: the return of a lost item refunds, voids or keeps its bill by
// the rule, depending on what was paid; the desk is told.
func TestLostReturn(t *testing.T) {
	// I00001 costs 25.00, the processing fee is 5.00: the bill is 30.00.
	for _, tc := range []struct {
		name        string
		lostReturn  string
		fee         string
		payLost     int64 // paid on the lost line before the return
		payFee      int64 // paid on the processing line
		waive       int64 // waived (oldest lines first) after the payments
		legacyPay   int64 // a payment written before 0014: allocated to no line
		wantBalance int64
		wantVoid    int64
		wantCredit  int64
		wantMessage []string
	}{
		{"RefundUnpaid", "refund", "kept", 0, 0, 0, 0, 500, 2500, 0, []string{"Lost item returned", "25.00 unpaid cancelled", "5.00 still charged"}},
		{"RefundUnpaidFeeToo", "refund", "refund", 0, 0, 0, 0, 0, 3000, 0, []string{"30.00 unpaid cancelled"}},
		{"RefundPaid", "refund", "kept", 2500, 500, 0, 0, -2500, 0, 2500, []string{"25.00 refunded to Alex Reader's account as credit", "5.00 still charged"}},
		{"RefundPartlyPaid", "refund", "refund", 1000, 0, 0, 0, -1000, 2000, 1000, []string{"10.00 refunded", "20.00 unpaid cancelled"}},
		{"VoidUnpaid", "void", "kept", 0, 0, 0, 0, 500, 2500, 0, []string{"25.00 unpaid cancelled"}},
		{"VoidPaidKeepsPayment", "void", "kept", 2500, 500, 0, 0, 0, 0, 0, []string{"5.00 still charged"}},
		{"VoidPartlyPaid", "void", "kept", 1000, 0, 0, 0, 500, 1500, 0, []string{"15.00 unpaid cancelled"}},
		{"None", "none", "kept", 0, 0, 0, 0, 3000, 0, 0, []string{"30.00 still charged"}},
		// A waiver is forgiven, not paid: it is never given back as credit (so never
		// refunded in cash), and the return leaves the balance at what is still owed.
		{"RefundWaived", "refund", "kept", 0, 0, 2500, 0, 500, 0, 0, []string{"25.00 waived stays waived", "5.00 still charged"}},
		{"RefundWaivedFeeToo", "refund", "refund", 0, 0, 3000, 0, 0, 0, 0, []string{"30.00 waived stays waived"}},
		{"RefundPaidAndWaived", "refund", "kept", 1000, 0, 1500, 0, -500, 0, 1000, []string{"10.00 refunded", "15.00 waived stays waived", "5.00 still charged"}},
		{"RefundPartlyWaived", "refund", "refund", 0, 0, 1000, 0, 0, 2000, 0, []string{"20.00 unpaid cancelled", "10.00 waived stays waived"}},
		{"VoidWaived", "void", "kept", 0, 0, 2500, 0, 500, 0, 0, []string{"5.00 still charged"}},
		// A payment written before lines could be chosen (0014) pays the oldest
		// line: it is money, so it is credited, and allocated to the line first.
		{"RefundLegacyPayment", "refund", "kept", 0, 0, 0, 2500, -2000, 0, 2500, []string{"25.00 refunded", "5.00 still charged"}},
		{"RefundLegacyPaymentAndWaiver", "refund", "kept", 0, 0, 1000, 1500, -1000, 0, 1500, []string{"15.00 refunded", "10.00 waived stays waived"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.exec(`UPDATE items SET price_cents = 2500 WHERE barcode = 'I00001'`)
			e.exec(`UPDATE circ_rules SET processing_fee_cents = 500, lost_return = ?, lost_return_fee = ?`, tc.lostReturn, tc.fee)
			loan := e.mustCheckout("P0001", "I00001").Loan
			if _, err := e.svc.DeclareLost(context.Background(), e.desk, e.patronID("P0001"), loan.ID); err != nil {
				t.Fatal(err)
			}
			if tc.payLost > 0 {
				if _, err := e.pay("P0001", tc.payLost, patrons.MethodCash, e.lineOf(loan.ID, "lost")); err != nil {
					t.Fatal(err)
				}
			}
			if tc.payFee > 0 {
				if _, err := e.pay("P0001", tc.payFee, patrons.MethodCard, e.lineOf(loan.ID, "processing")); err != nil {
					t.Fatal(err)
				}
			}
			if tc.legacyPay > 0 {
				e.exec(`INSERT INTO ledger (patron_id, kind, amount_cents, description, created_at) VALUES (?, 'payment', ?, 'Payment', ?)`,
					e.patronID("P0001"), -tc.legacyPay, db.FormatTime(e.clock.Now()))
			}
			if tc.waive > 0 {
				e.exec(`UPDATE staff_users SET can_waive = 1 WHERE id = ?`, e.desk.StaffID)
				if err := e.waive("P0001", tc.waive, "hardship"); err != nil {
					t.Fatal(err)
				}
			}
			// Back before it falls due: no overdue fine muddles the sums.
			e.clock.Set(at("2026-12-05 12:00"))
			r := e.mustCheckin("I00001")
			wantContains(t, r.Message, tc.wantMessage...)
			if !r.FoundLost || r.FineCents != 0 {
				t.Errorf("result %+v", r)
			}
			if got := e.balance("P0001"); got != tc.wantBalance {
				t.Errorf("balance %d, want %d", got, tc.wantBalance)
			}
			if got := -e.queryInt(`SELECT sum(amount_cents) FROM ledger WHERE loan_id = ? AND kind = 'void'`, loan.ID); got != tc.wantVoid {
				t.Errorf("voided %d, want %d", got, tc.wantVoid)
			}
			if got := -e.queryInt(`SELECT sum(amount_cents) FROM ledger WHERE loan_id = ? AND kind = 'credit'`, loan.ID); got != tc.wantCredit {
				t.Errorf("credited %d, want %d", got, tc.wantCredit)
			}
			if s := e.itemStatus("I00001"); s != "available" {
				t.Errorf("item %s, want available", s)
			}
			// The running list shows the message again.
			if got := e.queryString(`SELECT message FROM checkins WHERE id = ?`, r.ID); got != r.Message {
				t.Errorf("checkin row message %q, want %q", got, r.Message)
			}
			// A credit is money paid toward the line, traceably: never more than
			// the payments allocated to it.
			if got := e.queryInt(`SELECT coalesce(sum(a.amount_cents), 0) FROM ledger_allocations a JOIN ledger y ON y.id = a.payment_id
				WHERE a.charge_id = ? AND y.kind = 'payment'`, e.lineOf(loan.ID, "lost")); got < tc.wantCredit {
				t.Errorf("credited %d, but only %d of payments is allocated to the lost line", tc.wantCredit, got)
			}
			e.checkMoney()
		})
	}
}

// TestWaivedLostNotRefundable: the review's case. A lost bill waived in full,
// then the item returned: the patron is not in credit, so no cash goes back.
func TestWaivedLostNotRefundable(t *testing.T) {
	e := newEnv(t)
	e.exec(`UPDATE items SET price_cents = 2500 WHERE barcode = 'I00001'`)
	e.exec(`UPDATE circ_rules SET processing_fee_cents = 0, lost_return = 'refund', lost_return_fee = 'kept'`)
	loan := e.mustCheckout("P0001", "I00001").Loan
	if _, err := e.svc.DeclareLost(context.Background(), e.desk, e.patronID("P0001"), loan.ID); err != nil {
		t.Fatal(err)
	}
	e.exec(`UPDATE staff_users SET can_waive = 1 WHERE id = ?`, e.desk.StaffID)
	if err := e.waive("P0001", 2500, "hardship"); err != nil {
		t.Fatal(err)
	}
	if got := e.queryInt(`SELECT sum(a.amount_cents) FROM ledger_allocations a JOIN ledger y ON y.id = a.payment_id
		WHERE y.kind = 'waiver' AND a.charge_id = ?`, e.lineOf(loan.ID, "lost")); got != 2500 {
		t.Errorf("waiver allocated %d to the lost line, want 2500", got)
	}
	e.clock.Set(at("2026-12-05 12:00"))
	e.mustCheckin("I00001")
	if got := e.balance("P0001"); got != 0 {
		t.Errorf("balance %d after the return, want 0", got)
	}
	err := e.d.Write(context.Background(), func(tx *db.Tx) error {
		_, err := patrons.Refund(tx, e.desk, e.patronID("P0001"), 2500, patrons.MethodCash, "")
		return err
	})
	wantCode(t, err, stacks.EINVALID)
	e.checkMoney()
}

// TestPayLinesAndRefund: a payment pays the chosen lines, never more than they
// owe; a credit is refunded by a method, never more than the credit.
func TestPayLinesAndRefund(t *testing.T) {
	e := newEnv(t)
	e.exec(`UPDATE items SET price_cents = 2500 WHERE barcode = 'I00001'`)
	e.exec(`UPDATE circ_rules SET processing_fee_cents = 500, lost_return = 'refund', lost_return_fee = 'kept'`)
	loan := e.mustCheckout("P0001", "I00001").Loan
	if _, err := e.svc.DeclareLost(context.Background(), e.desk, e.patronID("P0001"), loan.ID); err != nil {
		t.Fatal(err)
	}
	lost, fee := e.lineOf(loan.ID, "lost"), e.lineOf(loan.ID, "processing")
	for _, tc := range []struct {
		name    string
		cents   int64
		method  string
		lines   []int64
		wantErr string
		balance int64
	}{
		{"ErrMoreThanTheLine", 600, "cash", []int64{fee}, stacks.EINVALID, 3000},
		{"ErrMethod", 100, "cheque", []int64{fee}, stacks.EINVALID, 3000},
		{"FeeLine", 500, "cash", []int64{fee}, "", 2500},
		{"ErrFeeLineNoLongerOpen", 100, "cash", []int64{fee}, stacks.EINVALID, 2500},
		{"PartOfLost", 1000, "card", []int64{lost}, "", 1500},
		{"Oldest", 1500, "other", nil, "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.pay("P0001", tc.cents, tc.method, tc.lines...)
			if tc.wantErr != "" {
				wantCode(t, err, tc.wantErr)
			} else if err != nil {
				t.Fatal(err)
			}
			if got := e.balance("P0001"); got != tc.balance {
				t.Errorf("balance %d, want %d", got, tc.balance)
			}
		})
	}
	// The item comes back: 25.00 paid is credited; refund it in cash.
	e.clock.Set(at("2026-12-05 12:00"))
	e.mustCheckin("I00001")
	if got := e.balance("P0001"); got != -2500 {
		t.Fatalf("balance %d after the return, want -2500", got)
	}
	refund := func(cents int64) error {
		return e.d.Write(context.Background(), func(tx *db.Tx) error {
			_, err := patrons.Refund(tx, e.desk, e.patronID("P0001"), cents, patrons.MethodCash, "")
			return err
		})
	}
	wantCode(t, refund(2600), stacks.EINVALID)
	if err := refund(2500); err != nil {
		t.Fatal(err)
	}
	if got := e.balance("P0001"); got != 0 {
		t.Errorf("balance %d after the refund, want 0", got)
	}
	wantCode(t, refund(1), stacks.EINVALID)

	// The cash-up of Central on the day of the payments: what each method took;
	// on the day of the return, the refund paid out in cash.
	var c patrons.CashUp
	err := e.d.Read(context.Background(), func(tx *db.Tx) (err error) {
		c, err = patrons.FindCashUp(tx, 1, "2026-11-30", mustUTC())
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][2]int64{"cash": {500, 0}, "card": {1000, 0}, "other": {1500, 0}}
	for _, m := range c.Totals {
		if w := want[m.Method]; m.TakenCents != w[0] || m.PaidOutCents != w[1] {
			t.Errorf("cash-up %s: taken %d, paid out %d; want %v", m.Method, m.TakenCents, m.PaidOutCents, w)
		}
	}
	if c.NetCents != 3000 || len(c.Entries) != 3 {
		t.Errorf("cash-up of 30 Nov: net %d, %d entries", c.NetCents, len(c.Entries))
	}
	err = e.d.Read(context.Background(), func(tx *db.Tx) (err error) {
		c, err = patrons.FindCashUp(tx, 1, "2026-12-05", mustUTC())
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if c.NetCents != -2500 || c.Totals[0].PaidOutCents != 2500 {
		t.Errorf("cash-up of 5 Dec: %+v", c)
	}
	e.checkMoney()
}

// TestClaimsReturned: a claimed loan's fine stops at the claim; the daily job does
// not make it lost; finding it closes the claim.
func TestClaimsReturned(t *testing.T) {
	e := newEnv(t)
	claimed := e.mustCheckout("P0001", "I00001").Loan
	e.mustCheckout("P0001", "I00002")
	e.mustCheckout("P0001", "I00003")
	// Due 21 Dec; claimed on 28 Dec.
	claimDay := at("2026-12-28 12:00")
	e.clock.Set(claimDay)
	if err := e.svc.ClaimReturned(context.Background(), e.desk, e.patronID("P0001"), claimed.ID); err != nil {
		t.Fatal(err)
	}
	wantCode(t, e.svc.ClaimReturned(context.Background(), e.desk, e.patronID("P0001"), claimed.ID), stacks.ECONFLICT)
	atClaim := e.mustCheckin("I00002").FineCents
	e.exec(`UPDATE circ_rules SET lost_after_days = 10`)
	e.clock.Set(at("2027-01-04 12:00"))
	later := e.mustCheckin("I00003").FineCents
	if atClaim <= 0 || later <= atClaim {
		t.Fatalf("fines %d at the claim and %d later: the test needs them to grow", atClaim, later)
	}
	res, err := circulation.AgeLost(context.Background(), e.d, mustUTC(), 50)
	if err != nil {
		t.Fatal(err)
	}
	if e.queryString(`SELECT coalesce(lost_at, '') FROM loans WHERE id = ?`, claimed.ID) != "" {
		t.Errorf("the daily job declared a claimed loan lost (%+v)", res)
	}
	var n int
	var list []circulation.ClaimedLoan
	err = e.d.Read(context.Background(), func(tx *db.Tx) (err error) {
		p, err := patrons.FindByID(tx, e.patronID("P0001"))
		if err != nil {
			return err
		}
		n = p.ClaimsReturned
		list, _, err = circulation.ClaimedReturned(tx, circulation.ClaimsFilter{BranchID: 1})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if n != 1 || len(list) != 1 || list[0].LoanID != claimed.ID || list[0].PatronCard != "P0001" {
		t.Errorf("claims: count %d, list %+v", n, list)
	}
	before := e.balance("P0001")
	r := e.mustCheckin("I00001")
	wantContains(t, r.Message, "claim is closed")
	if r.FineCents != atClaim {
		t.Errorf("fine of the claimed loan %d, want %d (counted until the claim)", r.FineCents, atClaim)
	}
	if got := e.balance("P0001"); got != before+atClaim {
		t.Errorf("balance %d, want %d", got, before+atClaim)
	}
	err = e.d.Read(context.Background(), func(tx *db.Tx) (err error) {
		list, _, err = circulation.ClaimedReturned(tx, circulation.ClaimsFilter{})
		return err
	})
	if err != nil || len(list) != 0 {
		t.Errorf("open claims after the return: %+v (%v)", list, err)
	}
	// Every claim, closed ones too, a page at a time.
	var more bool
	err = e.d.Read(context.Background(), func(tx *db.Tx) (err error) {
		list, more, err = circulation.ClaimedReturned(tx, circulation.ClaimsFilter{All: true, Limit: 1})
		return err
	})
	if err != nil || len(list) != 1 || list[0].LoanID != claimed.ID || list[0].ReturnedAt.IsZero() || more {
		t.Errorf("all claims: %+v, more %v (%v); want the closed claim, returned, and no more", list, more, err)
	}
	e.checkMoney()
	// The loan's patron taken off (as anonymisation does; only the count is
	// checked here): the patron's count stays.
	e.exec(`UPDATE loans SET patron_id = NULL WHERE id = ?`, claimed.ID)
	err = e.d.Read(context.Background(), func(tx *db.Tx) (err error) {
		p, err := patrons.FindByID(tx, e.patronID("P0001"))
		if err == nil {
			n = p.ClaimsReturned
		}
		return err
	})
	if err != nil || n != 1 {
		t.Errorf("claims count after the loan was anonymised: %d (%v), want 1", n, err)
	}
}

// TestAgeLost: the daily job declares loans lost after the rule's days, in chunks,
// once: a second run bills nobody again.
func TestAgeLost(t *testing.T) {
	e := newEnv(t)
	e.exec(`UPDATE items SET price_cents = 1200 WHERE barcode IN ('I00001', 'I00002', 'I00003')`)
	e.exec(`UPDATE circ_rules SET lost_after_days = 30, processing_fee_cents = 100`)
	var loans []int64
	for _, b := range []string{"I00001", "I00002", "I00003"} {
		loans = append(loans, e.mustCheckout("P0001", b).Loan.ID)
	}
	// Due 21 Dec: on 19 Jan (29 days) nothing of P0001's is lost, on 21 Jan it is.
	e.clock.Set(at("2027-01-19 12:00"))
	if _, err := circulation.AgeLost(context.Background(), e.d, mustUTC(), 2); err != nil {
		t.Fatal(err)
	}
	if got := e.balance("P0001"); got != 0 {
		t.Fatalf("balance %d before 30 days", got)
	}
	e.clock.Set(at("2027-01-21 12:00"))
	first, err := circulation.AgeLost(context.Background(), e.d, mustUTC(), 2)
	if err != nil {
		t.Fatal(err)
	}
	// Each: 12.00 + 1.00 processing, and the overdue fine until today (30 days
	// late: the Book rule's cap, 5.00).
	if got := e.balance("P0001"); got != 3*(1300+500) {
		t.Errorf("balance %d, want %d", got, 3*(1300+500))
	}
	for _, id := range loans {
		if e.queryString(`SELECT coalesce(lost_at, '') FROM loans WHERE id = ?`, id) == "" {
			t.Errorf("loan %d not lost", id)
		}
	}
	lines := e.queryInt(`SELECT count(*) FROM ledger`)
	again, err := circulation.AgeLost(context.Background(), e.d, mustUTC(), 2)
	if err != nil {
		t.Fatal(err)
	}
	if again.Declared != 0 || e.queryInt(`SELECT count(*) FROM ledger`) != lines || first.Declared < 3 {
		t.Errorf("first run %+v, second run %+v", first, again)
	}
	if got := e.balance("P0001"); got != 3*(1300+500) {
		t.Errorf("balance %d after the second run", got)
	}
	e.checkMoney()
}

// TestMarkMissing: a missing item is found at check-in and is available again.
func TestMarkMissing(t *testing.T) {
	e := newEnv(t)
	if err := e.svc.MarkMissing(context.Background(), e.desk, "I00004"); err != nil {
		t.Fatal(err)
	}
	if s := e.itemStatus("I00004"); s != "missing" {
		t.Fatalf("status %s", s)
	}
	e.mustCheckout("P0001", "I00005")
	wantCode(t, e.svc.MarkMissing(context.Background(), e.desk, "I00005"), stacks.ECONFLICT)
	r := e.mustCheckin("I00004")
	wantContains(t, r.Message, "Missing", "back in circulation")
	if s := e.itemStatus("I00004"); s != "available" {
		t.Errorf("status %s after check-in", s)
	}
	e.checkMoney()
}

func mustUTC() *time.Location { return time.UTC }

// TestPayDuplicateLine: a line ticked twice (line=X&line=X) is paid once, not
// refused by the database.
func TestPayDuplicateLine(t *testing.T) {
	e := newEnv(t)
	e.exec(`UPDATE items SET price_cents = 2500 WHERE barcode IN ('I00001', 'I00002')`)
	e.exec(`UPDATE circ_rules SET processing_fee_cents = 0`)
	l1 := e.mustCheckout("P0001", "I00001").Loan
	l2 := e.mustCheckout("P0001", "I00002").Loan
	for _, l := range []int64{l1.ID, l2.ID} {
		if _, err := e.svc.DeclareLost(context.Background(), e.desk, e.patronID("P0001"), l); err != nil {
			t.Fatal(err)
		}
	}
	id := e.lineOf(l1.ID, "lost")
	_, err := e.pay("P0001", 4000, patrons.MethodCash, id, id)
	wantCode(t, err, stacks.EINVALID) // more than the one line owes
	if _, err := e.pay("P0001", 2500, patrons.MethodCash, id, id); err != nil {
		t.Fatal(err)
	}
	if got := e.queryInt(`SELECT count(*) FROM ledger_allocations WHERE charge_id = ?`, id); got != 1 {
		t.Errorf("%d allocations to the line", got)
	}
	if got := e.balance("P0001"); got != 2500 {
		t.Errorf("balance %d, want 2500", got)
	}
	e.checkMoney()
}

// TestLostCheckoutOverride: lending a lost item to another patron checks it in
// from the first borrower, whose bill is reversed by the rule; the block says so
// before, and the result tells the desk what was done.
func TestLostCheckoutOverride(t *testing.T) {
	e := newEnv(t)
	e.exec(`UPDATE items SET price_cents = 2500 WHERE barcode = 'I00001'`)
	e.exec(`UPDATE circ_rules SET processing_fee_cents = 0, lost_return = 'refund'`)
	loan := e.mustCheckout("P0001", "I00001").Loan
	if _, err := e.svc.DeclareLost(context.Background(), e.desk, e.patronID("P0001"), loan.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.pay("P0001", 2500, patrons.MethodCash); err != nil {
		t.Fatal(err)
	}
	_, err := e.checkout("P0003", "I00001")
	b := wantBlocked(t, err, false, circulation.BlockOnLoanToOther, circulation.BlockLost)
	var lostBlock string
	for _, bl := range b.Blocks {
		if bl.Code == circulation.BlockLost {
			lostBlock = bl.Message
		}
	}
	wantContains(t, lostBlock, "lost loan of Alex Reader (P0001)", "lost bill will be reversed")
	res, err := e.checkout("P0003", "I00001", circulation.BlockOnLoanToOther, circulation.BlockLost)
	if err != nil {
		t.Fatal(err)
	}
	wantContains(t, res.Message, "Lost item returned: 25.00 refunded to Alex Reader's account as credit")
	if got := e.balance("P0001"); got != -2500 {
		t.Errorf("first borrower's balance %d, want -2500", got)
	}
	e.checkMoney()
}

// TestLostFineAtDeclaration: declaring an overdue loan lost charges the fine
// accrued until then, as a check-in at that moment would (rule, calendar, cap),
// unless the rule forgives it; the later return charges no fine for the lost
// period, and its message names what it did.
func TestLostFineAtDeclaration(t *testing.T) {
	// What a plain check-in at when charges for a loan of I00001 to P0001.
	checkinFine := func(t *testing.T, when string) int64 {
		e := newEnv(t)
		e.mustCheckout("P0001", "I00001")
		e.clock.Set(at(when))
		return e.mustCheckin("I00001").FineCents
	}
	for _, tc := range []struct {
		name     string
		lostAt   string
		forgive  bool
		wantCap  bool // the fine is the rule's cap (5.00)
		wantNone bool
	}{
		{"NotLate", "2026-12-10 12:00", false, false, true},
		{"Charged", "2027-01-04 12:00", false, false, false},
		{"Capped", "2027-03-01 12:00", false, true, false},
		{"Forgiven", "2027-01-04 12:00", true, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := checkinFine(t, tc.lostAt)
			if tc.wantCap && want != 500 || !tc.wantCap && !tc.wantNone && (want <= 0 || want >= 500) {
				t.Fatalf("the check-in fine at %s is %d: the case does not test what it says", tc.lostAt, want)
			}
			if tc.wantNone {
				want = 0
			}
			e := newEnv(t)
			e.exec(`UPDATE items SET price_cents = 2500 WHERE barcode = 'I00001'`)
			e.exec(`UPDATE circ_rules SET processing_fee_cents = 0, lost_return = 'refund', lost_forgive_fine = ?`, tc.forgive)
			loan := e.mustCheckout("P0001", "I00001").Loan
			e.clock.Set(at(tc.lostAt))
			// The confirmation's quote names the fine the declaration charges.
			q, err := e.svc.QuoteLost(context.Background(), e.patronID("P0001"), loan.ID)
			if err != nil {
				t.Fatal(err)
			}
			if q.FineCents != want || q.Billed() != 2500+want || q.FineForgiven != tc.forgive {
				t.Errorf("quote %+v, want a fine of %d", q, want)
			}
			bill, err := e.svc.DeclareLostAsQuoted(context.Background(), e.desk, e.patronID("P0001"), loan.ID, q.Billed())
			if err != nil {
				t.Fatal(err)
			}
			if bill.FineCents != want {
				t.Errorf("fine at the declaration %d, want %d", bill.FineCents, want)
			}
			if got := e.balance("P0001"); got != 2500+want {
				t.Errorf("balance %d after the declaration, want %d", got, 2500+want)
			}
			// Months later it comes back: no fine for the lost period.
			e.clock.Set(at("2027-06-01 12:00"))
			r := e.mustCheckin("I00001")
			if r.FineCents != 0 {
				t.Errorf("the return charged a fine of %d", r.FineCents)
			}
			wantContains(t, r.Message, "25.00 unpaid cancelled")
			if got := e.balance("P0001"); got != want {
				t.Errorf("balance %d after the return, want the fine %d", got, want)
			}
			wantLines := int64(0)
			if want > 0 {
				wantLines = 1
			}
			if got := e.queryInt(`SELECT count(*) FROM ledger WHERE loan_id = ? AND kind = 'overdue'`, loan.ID); got != wantLines {
				t.Errorf("%d overdue lines, want %d", got, wantLines)
			}
			e.checkMoney()
		})
	}

	// A loan declared lost before 0017 (lost_fine_settled 0) still has its fine
	// until lost_at charged at the return, and the message says so.
	t.Run("DeclaredBeforeTheFix", func(t *testing.T) {
		want := checkinFine(t, "2027-01-04 12:00")
		e := newEnv(t)
		e.exec(`UPDATE items SET price_cents = 2500 WHERE barcode = 'I00001'`)
		e.exec(`UPDATE circ_rules SET processing_fee_cents = 0, lost_return = 'refund'`)
		loan := e.mustCheckout("P0001", "I00001").Loan
		e.clock.Set(at("2027-01-04 12:00"))
		if _, err := e.svc.DeclareLost(context.Background(), e.desk, e.patronID("P0001"), loan.ID); err != nil {
			t.Fatal(err)
		}
		e.exec(`DELETE FROM ledger WHERE loan_id = ? AND kind = 'overdue'`, loan.ID)
		e.exec(`UPDATE loans SET lost_fine_settled = 0 WHERE id = ?`, loan.ID)
		e.clock.Set(at("2027-06-01 12:00"))
		r := e.mustCheckin("I00001")
		if r.FineCents != want {
			t.Errorf("fine at the return %d, want %d (until lost_at)", r.FineCents, want)
		}
		wantContains(t, r.Message, "25.00 unpaid cancelled", "Overdue fine charged: "+stacks.FormatMoney(want))
		e.checkMoney()
	})
}

// TestDeclareLostAsQuoted: QuoteLost says what a declaration would bill and
// writes nothing; DeclareLostAsQuoted bills only the amount quoted, and refuses
// (with the new quote, writing nothing) once the bill has changed.
func TestDeclareLostAsQuoted(t *testing.T) {
	e := newEnv(t)
	e.exec(`UPDATE items SET price_cents = 1000 WHERE barcode = 'I00001'`)
	e.exec(`UPDATE circ_rules SET processing_fee_cents = 299, lost_forgive_fine = 0`)
	loan := e.mustCheckout("P0001", "I00001").Loan
	p := e.patronID("P0001")
	before := e.balance("P0001")

	q, err := e.svc.QuoteLost(context.Background(), p, loan.ID)
	if err != nil {
		t.Fatal(err)
	}
	if q.ReplacementCents != 1000 || q.ProcessingCents != 299 || q.FineCents != 0 || q.Billed() != 1299 {
		t.Fatalf("quote %+v, want 10.00 + 2.99", q)
	}
	if got := e.queryInt(`SELECT count(*) FROM loans WHERE id = ? AND lost_at IS NOT NULL`, loan.ID); got != 0 || e.balance("P0001") != before {
		t.Fatalf("a quote wrote: lost %d, balance %d", got, e.balance("P0001"))
	}

	t.Run("ErrChanged", func(t *testing.T) {
		e.exec(`UPDATE items SET price_cents = 1500 WHERE barcode = 'I00001'`)
		bill, err := e.svc.DeclareLostAsQuoted(context.Background(), e.desk, p, loan.ID, q.Billed())
		wantCode(t, err, stacks.ECONFLICT)
		if bill.Billed() != 1799 {
			t.Errorf("new quote %+v, want 17.99", bill)
		}
		if got := e.queryInt(`SELECT count(*) FROM loans WHERE id = ? AND lost_at IS NOT NULL`, loan.ID); got != 0 || e.balance("P0001") != before {
			t.Errorf("a refused declaration wrote: lost %d, balance %d", got, e.balance("P0001"))
		}
		e.exec(`UPDATE items SET price_cents = 1000 WHERE barcode = 'I00001'`)
	})

	t.Run("OK", func(t *testing.T) {
		bill, err := e.svc.DeclareLostAsQuoted(context.Background(), e.desk, p, loan.ID, q.Billed())
		if err != nil {
			t.Fatal(err)
		}
		if bill.Billed() != 1299 || e.balance("P0001") != before+1299 {
			t.Errorf("bill %+v, balance %d, want 12.99 more than %d", bill, e.balance("P0001"), before)
		}
		e.checkMoney()
	})
}
