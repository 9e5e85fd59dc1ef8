package circulation_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/circulation"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/dbtest"
	"github.com/stacks-ils/stacks/demo"
)

func TestCheckout(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		e := newEnv(t)
		res := e.mustCheckout("P0001", "I00001")
		l := res.Loan
		// Monday 30 November + 21 days is Monday 21 December, open: due at closing.
		if want := at("2026-12-21 20:00"); !l.DueAt.Equal(want) {
			t.Errorf("due %s, want %s", l.DueAt, want)
		}
		if !l.IssuedAt.Equal(dbtest.Monday) || l.Barcode != "I00001" || l.Title != "Pride and Prejudice" ||
			l.PatronID != e.patronID("P0001") || l.RenewalsAllowed != 2 || l.Renewals != 0 || l.ID == 0 {
			t.Errorf("loan = %+v", l)
		}
		if res.Renewed || len(res.Overrides) != 0 || res.FilledHold != 0 || res.FineCents != 0 {
			t.Errorf("result = %+v", res)
		}
		if s := e.itemStatus("I00001"); s != "on_loan" {
			t.Errorf("item status %s, want on_loan", s)
		}
		if n := e.currentLoans("I00001"); n != 1 {
			t.Errorf("%d current loans, want 1", n)
		}
		row := e.queryString(`SELECT patron_id || ' ' || branch_id || ' ' || staff_id || ' ' || issued_at || ' ' || due_at FROM loans WHERE id = ?`, l.ID)
		want := fmt.Sprintf("%d 1 %d 2026-11-30T10:00:00Z 2026-12-21T20:00:00Z", e.patronID("P0001"), e.desk.StaffID)
		if row != want {
			t.Errorf("loan row %q, want %q", row, want)
		}
		if n := e.auditCount("checkout.override"); n != 0 {
			t.Errorf("%d override audit entries for a plain checkout", n)
		}
		var visit []circulation.Loan
		err := e.d.Read(context.Background(), func(tx *db.Tx) error {
			var err error
			visit, err = circulation.PatronLoans(tx, e.patronID("P0001"))
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(visit) != 1 || visit[0].ID != l.ID || !visit[0].DueAt.Equal(l.DueAt) || visit[0].Title != l.Title || !visit[0].IssuedAt.Equal(dbtest.Monday) {
			t.Errorf("PatronLoans = %+v", visit)
		}
	})

	t.Run("OKDueMovedToNextOpenDay", func(t *testing.T) {
		e := newEnv(t)
		// Friday 4 December + 21 days is Christmas Day, then Boxing Day and a Sunday.
		e.clock.Set(at("2026-12-04 11:00"))
		res := e.mustCheckout("P0001", "I00001")
		if want := at("2026-12-28 20:00"); !res.Loan.DueAt.Equal(want) {
			t.Errorf("due %s, want %s", res.Loan.DueAt, want)
		}
	})

	t.Run("OKBarcodeTrimmed", func(t *testing.T) {
		e := newEnv(t)
		res := e.mustCheckout("P0001", "  I00001\t")
		if res.Loan.Barcode != "I00001" {
			t.Errorf("barcode %q", res.Loan.Barcode)
		}
	})

	t.Run("ErrEmptyBarcode", func(t *testing.T) {
		e := newEnv(t)
		_, err := e.checkout("P0001", "  ")
		wantCode(t, err, stacks.EINVALID)
	})

	t.Run("ErrUnknownPatron", func(t *testing.T) {
		e := newEnv(t)
		_, err := e.svc.Checkout(context.Background(), circulation.CheckoutRequest{Actor: e.desk, PatronID: 99999, Barcode: "I00001"})
		wantCode(t, err, stacks.ENOTFOUND)
	})

	t.Run("ErrNoBranch", func(t *testing.T) {
		e := newEnv(t)
		_, err := e.svc.Checkout(context.Background(), circulation.CheckoutRequest{Actor: stacks.Actor{Name: "nowhere"}, PatronID: e.patronID("P0001"), Barcode: "I00001"})
		wantCode(t, err, stacks.EINVALID)
	})
}

func TestCheckoutRefused(t *testing.T) {
	tests := []struct {
		name    string
		card    string
		barcode string
		setup   func(e *env)
		code    string
		words   []string
	}{
		{"ErrUnknownBarcode", "P0001", "NOSUCH42", nil, circulation.BlockUnknownBarcode, []string{"NOSUCH42"}},
		{"ErrCardExpired", "P0004", "I00001", nil, circulation.BlockCardExpired, []string{"P0004", "2026-10-16"}},
		{"ErrPatronBlocked", "P0005", "I00001", nil, circulation.BlockPatronBlocked,
			[]string{"Emery Barred", "Repeated damage to items; see the branch manager before lending."}},
		{"ErrWithdrawn", "P0001", "I00002", func(e *env) { e.exec(`UPDATE items SET status = 'withdrawn' WHERE barcode = 'I00002'`) },
			circulation.BlockWithdrawn, []string{"Kindred", "I00002", "withdrawn"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			if tt.setup != nil {
				tt.setup(e)
			}
			_, err := e.checkout(tt.card, tt.barcode)
			b := wantBlocked(t, err, true, tt.code)
			wantContains(t, b.Blocks[0].Message, tt.words...)
			if b.Blocks[0].Overridable {
				t.Error("a refusal is overridable")
			}

			// Confirming does not help, whatever is confirmed.
			_, err = e.checkout(tt.card, tt.barcode, tt.code, circulation.BlockFines, circulation.BlockOnLoanToOther)
			wantBlocked(t, err, true, tt.code)
			if n := e.queryInt(`SELECT count(*) FROM loans WHERE issued_at >= ?`, db.FormatTime(dbtest.Monday)); n != 0 {
				t.Errorf("%d loans made", n)
			}
		})
	}

	t.Run("ErrSeveralRefusals", func(t *testing.T) {
		e := newEnv(t)
		e.exec(`UPDATE items SET status = 'withdrawn' WHERE barcode = 'I00002'`)
		e.exec(`UPDATE patrons SET blocked = 1, block_note = 'Lost card reported' WHERE card = 'P0004'`)
		_, err := e.checkout("P0004", "I00002")
		wantBlocked(t, err, true, circulation.BlockCardExpired, circulation.BlockPatronBlocked, circulation.BlockWithdrawn)
	})

	t.Run("ErrAutoConfirmDoesNotOverride", func(t *testing.T) {
		e := newEnv(t)
		_, err := e.svc.Checkout(context.Background(), circulation.CheckoutRequest{Actor: e.desk, PatronID: e.patronID("P0005"),
			Barcode: "I00001", AutoConfirm: func(circulation.Block) bool { return true }})
		wantBlocked(t, err, true, circulation.BlockPatronBlocked)
	})
}

func TestCheckoutConfirm(t *testing.T) {
	t.Run("Fines", func(t *testing.T) {
		e := newEnv(t)
		_, err := e.checkout("P0002", "I00001")
		b := wantBlocked(t, err, false, circulation.BlockFines)
		wantContains(t, b.Blocks[0].Message, "Blake Owing", "12.50", "5.00")
		if b.Title != "Pride and Prejudice" || b.Barcode != "I00001" {
			t.Errorf("blocked title %q barcode %q", b.Title, b.Barcode)
		}
		if n := e.currentLoans("I00001"); n != 0 {
			t.Fatalf("a blocked checkout made %d loans", n)
		}

		res, err := e.checkout("P0002", "I00001", circulation.BlockFines)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Overrides) != 1 || res.Overrides[0].Code != circulation.BlockFines {
			t.Errorf("overrides %+v", res.Overrides)
		}
		detail := e.queryString(`SELECT detail FROM audit_log WHERE action = 'checkout.override' AND object_type = 'loan' AND object_id = ? AND staff_id = ?`,
			res.Loan.ID, e.desk.StaffID)
		wantContains(t, detail, "fines", "12.50")
	})

	t.Run("FinesAutoConfirm", func(t *testing.T) {
		e := newEnv(t)
		var asked []string
		_, err := e.svc.Checkout(context.Background(), circulation.CheckoutRequest{Actor: e.desk, PatronID: e.patronID("P0002"), Barcode: "I00001",
			AutoConfirm: func(b circulation.Block) bool { asked = append(asked, b.Code); return true }})
		if err != nil {
			t.Fatal(err)
		}
		if len(asked) != 1 || asked[0] != circulation.BlockFines {
			t.Errorf("AutoConfirm asked about %v", asked)
		}
	})

	t.Run("OnLoanToOther", func(t *testing.T) {
		e := newEnv(t)
		old := e.mustCheckout("P0001", "I00001").Loan
		// Wednesday 30 December: due Monday 21st, late on 22, 23, 24, 28, 29, 30
		// December (Christmas, Boxing Day and a Sunday are free): 6 days, 1.50.
		e.clock.Set(at("2026-12-30 10:00"))
		_, err := e.checkout("P0003", "I00001")
		b := wantBlocked(t, err, false, circulation.BlockOnLoanToOther)
		wantContains(t, b.Blocks[0].Message, "Alex Reader", "P0001", "2026-12-21")

		res, err := e.checkout("P0003", "I00001", circulation.BlockOnLoanToOther)
		if err != nil {
			t.Fatal(err)
		}
		if res.FineCents != 150 {
			t.Errorf("previous borrower charged %d, want 150", res.FineCents)
		}
		if got := e.queryString(`SELECT returned_at || ' ' || return_branch_id FROM loans WHERE id = ?`, old.ID); got != "2026-12-30T10:00:00Z 1" {
			t.Errorf("old loan returned %q", got)
		}
		if got := e.queryInt(`SELECT patron_id FROM loans WHERE item_id = ? AND returned_at IS NULL`, e.itemID("I00001")); got != e.patronID("P0003") {
			t.Errorf("current loan is to patron %d, want P0003", got)
		}
		if got := e.queryInt(`SELECT amount_cents FROM ledger WHERE patron_id = ? AND kind = 'overdue' AND loan_id = ?`, e.patronID("P0001"), old.ID); got != 150 {
			t.Errorf("ledger charge %d, want 150", got)
		}
		if n := e.currentLoans("I00001"); n != 1 {
			t.Errorf("%d current loans", n)
		}
	})

	t.Run("OnLoanToOtherNotOverdue", func(t *testing.T) {
		e := newEnv(t)
		e.mustCheckout("P0001", "I00001")
		res, err := e.checkout("P0003", "I00001", circulation.BlockOnLoanToOther)
		if err != nil {
			t.Fatal(err)
		}
		if res.FineCents != 0 || e.balance("P0001") != 0 {
			t.Errorf("fine %d, balance %d for a loan not overdue", res.FineCents, e.balance("P0001"))
		}
	})

	t.Run("HoldShelfForOther", func(t *testing.T) {
		e := newEnv(t)
		hold := e.addHold("P0003", "I00001", 1, false)
		e.exec(`UPDATE holds SET status = 'waiting', priority = 0, trapped_item_id = ?, waiting_since = ?, pickup_by = '2026-12-08T20:00:00Z' WHERE id = ?`,
			e.itemID("I00001"), db.FormatTime(dbtest.Monday), hold)
		e.exec(`UPDATE items SET status = 'on_hold_shelf' WHERE barcode = 'I00001'`)
		_, err := e.checkout("P0001", "I00001")
		b := wantBlocked(t, err, false, circulation.BlockHoldShelf)
		wantContains(t, b.Blocks[0].Message, "Casey Waiting", "P0003", "hold shelf")

		if _, err := e.checkout("P0001", "I00001", circulation.BlockHoldShelf); err != nil {
			t.Fatal(err)
		}
		if got := e.queryString(`SELECT status || ' ' || priority || ' ' || coalesce(CAST(trapped_item_id AS TEXT), 'none') FROM holds WHERE id = ?`, hold); got != "queued 1 none" {
			t.Errorf("hold after override: %q, want queued at the head", got)
		}
		if s := e.itemStatus("I00001"); s != "on_loan" {
			t.Errorf("item %s", s)
		}
		if e.auditCount("hold.release") != 1 {
			t.Error("no hold.release audit entry")
		}
	})

	t.Run("HoldInTransitForOther", func(t *testing.T) {
		e := newEnv(t)
		hold := e.addHold("P0003", "I00001", 2, false)
		e.exec(`UPDATE holds SET status = 'in_transit', priority = 0, trapped_item_id = ? WHERE id = ?`, e.itemID("I00001"), hold)
		e.exec(`UPDATE items SET status = 'in_transit', transit_to_id = 2 WHERE barcode = 'I00001'`)
		_, err := e.checkout("P0001", "I00001")
		b := wantBlocked(t, err, false, circulation.BlockHoldShelf)
		wantContains(t, b.Blocks[0].Message, "in transit", "Casey Waiting")
	})

	t.Run("OnHoldForOther", func(t *testing.T) {
		e := newEnv(t)
		hold := e.addHold("P0003", "I00001", 1, false)
		_, err := e.checkout("P0001", "I00001")
		b := wantBlocked(t, err, false, circulation.BlockOnHold)
		wantContains(t, b.Blocks[0].Message, "Casey Waiting", "P0003")
		res, err := e.checkout("P0001", "I00001", circulation.BlockOnHold)
		if err != nil {
			t.Fatal(err)
		}
		if res.FilledHold != 0 {
			t.Errorf("filled hold %d of another patron", res.FilledHold)
		}
		if got := e.queryString(`SELECT status FROM holds WHERE id = ?`, hold); got != "queued" {
			t.Errorf("the other patron's hold is %s", got)
		}
	})

	t.Run("SuspendedHoldDoesNotBlock", func(t *testing.T) {
		e := newEnv(t)
		hold := e.addHold("P0003", "I00001", 1, false)
		e.exec(`UPDATE holds SET suspended_until = '2026-12-15' WHERE id = ?`, hold)
		e.mustCheckout("P0001", "I00001")
	})

	t.Run("OwnHoldFilled", func(t *testing.T) {
		e := newEnv(t)
		other := e.addHold("P0003", "I00001", 1, false)
		own := e.addHold("P0001", "I00001", 1, false)
		// P0003 is first in the queue: lending to P0001 asks, and fills P0001's hold.
		res, err := e.checkout("P0001", "I00001", circulation.BlockOnHold)
		if err != nil {
			t.Fatal(err)
		}
		if res.FilledHold != own {
			t.Errorf("filled hold %d, want %d", res.FilledHold, own)
		}
		if got := e.queryString(`SELECT status FROM holds WHERE id = ?`, own); got != "fulfilled" {
			t.Errorf("own hold %s", got)
		}
		if got := e.queryInt(`SELECT priority FROM holds WHERE id = ?`, other); got != 1 {
			t.Errorf("other hold priority %d", got)
		}
	})

	t.Run("OwnHoldOnShelf", func(t *testing.T) {
		e := newEnv(t)
		own := e.addHold("P0003", "I00001", 1, false)
		e.exec(`UPDATE holds SET status = 'waiting', priority = 0, trapped_item_id = ? WHERE id = ?`, e.itemID("I00001"), own)
		e.exec(`UPDATE items SET status = 'on_hold_shelf' WHERE barcode = 'I00001'`)
		res := e.mustCheckout("P0003", "I00001")
		if res.FilledHold != own {
			t.Errorf("filled hold %d, want %d", res.FilledHold, own)
		}
		if got := e.queryString(`SELECT status || ' ' || coalesce(CAST(trapped_item_id AS TEXT), 'none') FROM holds WHERE id = ?`, own); got != "fulfilled none" {
			t.Errorf("hold %q", got)
		}
	})

	t.Run("MaxLoans", func(t *testing.T) {
		e := newEnv(t)
		e.exec(`UPDATE circ_rules SET max_loans = 1 WHERE item_type_id = 1 AND patron_category_id IS NULL AND branch_id IS NULL`)
		e.mustCheckout("P0001", "I00001")
		_, err := e.checkout("P0001", "I00002")
		b := wantBlocked(t, err, false, circulation.BlockMaxLoans)
		wantContains(t, b.Blocks[0].Message, "Alex Reader", "1")
		if _, err := e.checkout("P0001", "I00002", circulation.BlockMaxLoans); err != nil {
			t.Fatal(err)
		}
	})

	// The demo's child rules allow "10 books at a time; 2 DVDs": a rule's limit
	// counts the loans the rule governs, so books out do not use up the DVD limit.
	t.Run("MaxLoansCountsTheRulesItemType", func(t *testing.T) {
		e := newEnv(t)
		e.exec(`INSERT INTO patrons (card, surname, first_name, category_id, home_branch_id, expires_on, created_at)
			VALUES ('C0001', 'Young', 'Kit', 2, 1, '2028-01-01', '2026-01-01T10:00:00Z')`)
		for _, b := range []string{"I00001", "I00002", "I00003"} {
			e.mustCheckout("C0001", b)
		}
		dvd1 := e.freeItem("DVD", 1)
		dvd2 := e.freeItem("DVD", 1, dvd1)
		dvd3 := e.freeItem("DVD", 1, dvd1, dvd2)
		if _, err := e.checkout("C0001", dvd1); err != nil {
			t.Fatalf("first DVD for a child with 3 books out: %v", err)
		}
		if _, err := e.checkout("C0001", dvd2); err != nil {
			t.Fatalf("second DVD: %v", err)
		}
		_, err := e.checkout("C0001", dvd3)
		wantBlocked(t, err, false, circulation.BlockMaxLoans)
	})

	t.Run("NotForLoanReference", func(t *testing.T) {
		e := newEnv(t)
		ref := e.queryString(`SELECT barcode FROM items WHERE item_type_id = 3 AND status = 'available' ORDER BY id LIMIT 1`)
		_, err := e.checkout("P0001", ref)
		b := wantBlocked(t, err, false, circulation.BlockNotForLoan)
		wantContains(t, b.Blocks[0].Message, "not for loan", "Reference")
		res, err := e.checkout("P0001", ref, circulation.BlockNotForLoan)
		if err != nil {
			t.Fatal(err)
		}
		// A loan period of 0 days: due back at closing today.
		if want := at("2026-11-30 20:00"); !res.Loan.DueAt.Equal(want) {
			t.Errorf("due %s, want %s", res.Loan.DueAt, want)
		}
	})

	t.Run("NotForLoanItemType", func(t *testing.T) {
		e := newEnv(t)
		e.exec(`UPDATE items SET item_type_id = 3 WHERE barcode = 'I00003'`)
		_, err := e.checkout("P0001", "I00003")
		wantBlocked(t, err, false, circulation.BlockNotForLoan)
	})

	for _, status := range []string{"lost", "missing"} {
		t.Run("Lost/"+status, func(t *testing.T) {
			e := newEnv(t)
			e.exec(`UPDATE items SET status = ? WHERE barcode = 'I00004'`, status)
			_, err := e.checkout("P0001", "I00004")
			b := wantBlocked(t, err, false, circulation.BlockLost)
			wantContains(t, b.Blocks[0].Message, "Things Fall Apart")
			if _, err := e.checkout("P0001", "I00004", circulation.BlockLost); err != nil {
				t.Fatal(err)
			}
			if s := e.itemStatus("I00004"); s != "on_loan" {
				t.Errorf("item %s after lending a %s item", s, status)
			}
		})
	}

	t.Run("SeveralBlocksNeedEveryConfirmation", func(t *testing.T) {
		e := newEnv(t)
		e.addHold("P0003", "I00001", 1, false)
		_, err := e.checkout("P0002", "I00001", circulation.BlockFines)
		wantBlocked(t, err, false, circulation.BlockFines, circulation.BlockOnHold)
		res, err := e.checkout("P0002", "I00001", circulation.BlockFines, circulation.BlockOnHold)
		if err != nil {
			t.Fatal(err)
		}
		if n := e.queryInt(`SELECT count(*) FROM audit_log WHERE action = 'checkout.override' AND object_id = ?`, res.Loan.ID); n != 2 {
			t.Errorf("%d override entries, want 2", n)
		}
	})

	t.Run("RenewOnRescan", func(t *testing.T) {
		e := newEnv(t)
		first := e.mustCheckout("P0001", "I00001").Loan
		e.clock.Set(at("2026-12-07 10:00"))
		_, err := e.checkout("P0001", "I00001")
		b := wantBlocked(t, err, false, circulation.BlockRenew)
		wantContains(t, b.Blocks[0].Message, "Alex Reader", "2026-12-21")

		res, err := e.checkout("P0001", "I00001", circulation.BlockRenew)
		if err != nil {
			t.Fatal(err)
		}
		if !res.Renewed || res.Loan.ID != first.ID || res.Loan.Renewals != 1 {
			t.Errorf("result %+v", res)
		}
		if want := at("2026-12-28 20:00"); !res.Loan.DueAt.Equal(want) {
			t.Errorf("renewed due %s, want %s", res.Loan.DueAt, want)
		}
		if got := e.queryInt(`SELECT renewals FROM loans WHERE id = ?`, first.ID); got != 1 {
			t.Errorf("renewals %d", got)
		}
		if n := e.currentLoans("I00001"); n != 1 {
			t.Errorf("%d current loans", n)
		}
	})

	t.Run("ErrRescanSameDay", func(t *testing.T) {
		// Scanned twice the day it was lent: a renewal would not move the due
		// date, so the rescan is refused at once (no question to confirm), and
		// no renewal is used.
		e := newEnv(t)
		first := e.mustCheckout("P0001", "I00001").Loan
		_, err := e.checkout("P0001", "I00001")
		var refused *circulation.RenewRefusedError
		if !errors.As(err, &refused) || refused.Result.Refusal != circulation.RenewNotMoved {
			t.Fatalf("rescan the day of the loan: %v, want a renewal refused as not moving the due date", err)
		}
		if got := e.queryInt(`SELECT renewals FROM loans WHERE id = ?`, first.ID); got != 0 {
			t.Errorf("renewals %d, want 0", got)
		}
	})

	t.Run("ErrRenewOnRescanRefused", func(t *testing.T) {
		e := newEnv(t)
		first := e.mustCheckout("P0001", "I00001").Loan
		e.exec(`UPDATE loans SET renewals = 2 WHERE id = ?`, first.ID)
		e.clock.Set(at("2026-12-07 10:00"))
		_, err := e.checkout("P0001", "I00001", circulation.BlockRenew)
		wantCode(t, err, stacks.ECONFLICT)
		wantContains(t, stacks.ErrorMessage(err), "2 of 2")
	})
}

// TestCheckoutKeepExisting: with KeepExisting, a checkout of an item the patron
// already has returns the loan as it is, whatever AutoConfirm says of the renewal,
// and writes nothing; a lost loan is not kept, so the renewal question stands.
func TestCheckoutKeepExisting(t *testing.T) {
	keep := func(e *env, card, barcode string, renewalPolicy bool) (circulation.CheckoutResult, error) {
		e.tb.Helper()
		return e.svc.Checkout(context.Background(), circulation.CheckoutRequest{
			Actor: e.desk, PatronID: e.patronID(card), Barcode: barcode, KeepExisting: true,
			AutoConfirm: func(b circulation.Block) bool { return b.Code == circulation.BlockRenew && renewalPolicy },
		})
	}
	// state is what a write would change: the loan's due date and renewals, the
	// loans and the audit log.
	state := func(e *env, loanID int64) string {
		return fmt.Sprintf("due %s, renewals %d, loans %d, audit %d",
			e.queryString(`SELECT due_at FROM loans WHERE id = ?`, loanID),
			e.queryInt(`SELECT renewals FROM loans WHERE id = ?`, loanID),
			e.queryInt(`SELECT count(*) FROM loans`), e.queryInt(`SELECT count(*) FROM audit_log`))
	}
	for _, tc := range []struct {
		name          string
		when          string
		renewalPolicy bool
	}{
		{"SameDay", "2026-11-30 10:05", false},
		{"SameDayRenewalPolicyY", "2026-11-30 10:05", true},
		{"WeekLater", "2026-12-07 10:00", false},
		{"WeekLaterRenewalPolicyY", "2026-12-07 10:00", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			first := e.mustCheckout("P0001", "I00001").Loan
			before := state(e, first.ID)
			e.clock.Set(at(tc.when))
			res, err := keep(e, "P0001", "I00001", tc.renewalPolicy)
			if err != nil {
				t.Fatal(err)
			}
			if !res.AlreadyLent || res.Renewed || res.Loan.ID != first.ID || res.Loan.Renewals != 0 || res.FineCents != 0 {
				t.Errorf("result %+v, want the loan as it is, AlreadyLent", res)
			}
			if !res.Loan.DueAt.Equal(first.DueAt) || res.Loan.Title != first.Title || res.Loan.RenewalsAllowed == 0 {
				t.Errorf("loan %+v, want due %s as lent, with its title and renewals allowed", res.Loan, first.DueAt)
			}
			if after := state(e, first.ID); after != before {
				t.Errorf("after the checkout again: %s; before: %s", after, before)
			}
		})
	}

	t.Run("Desk", func(t *testing.T) {
		// Without KeepExisting (the desk), the renewal question is asked.
		e := newEnv(t)
		e.mustCheckout("P0001", "I00001")
		e.clock.Set(at("2026-12-07 10:00"))
		_, err := e.checkout("P0001", "I00001")
		wantBlocked(t, err, false, circulation.BlockRenew)
	})

	t.Run("OtherPatron", func(t *testing.T) {
		// Kept only for the patron who has it: another is blocked as ever.
		e := newEnv(t)
		e.mustCheckout("P0001", "I00001")
		_, err := keep(e, "P0003", "I00001", true)
		wantBlocked(t, err, false, circulation.BlockOnLoanToOther)
	})

	t.Run("LostLoan", func(t *testing.T) {
		// A loan declared lost is not an ordinary loan to keep: the renewal
		// question (here refused by the policy) stands, and nothing is written.
		e := newEnv(t)
		first := e.mustCheckout("P0001", "I00001").Loan
		e.exec(`UPDATE loans SET lost_at = ? WHERE id = ?`, db.FormatTime(at("2026-12-01 10:00")), first.ID)
		before := state(e, first.ID)
		e.clock.Set(at("2026-12-07 10:00"))
		_, err := keep(e, "P0001", "I00001", false)
		wantBlocked(t, err, false, circulation.BlockRenew)
		if after := state(e, first.ID); after != before {
			t.Errorf("after: %s; before: %s", after, before)
		}
	})
}

// TestCheckoutDeskScenario is step 3 and 5 of the desk session: P0001 takes five
// items; P0002 owes fines, so the first item asks, and the web layer passes the
// confirmation on for the rest of the visit.
func TestCheckoutDeskScenario(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	for i := 1; i <= 5; i++ {
		res := e.mustCheckout("P0001", fmt.Sprintf("I%05d", i))
		if want := at("2026-12-21 20:00"); !res.Loan.DueAt.Equal(want) {
			t.Errorf("I%05d due %s, want %s", i, res.Loan.DueAt, want)
		}
	}
	for i := 1; i <= 5; i++ {
		if r := e.mustCheckin(fmt.Sprintf("I%05d", i)); !r.WasOnLoan || r.FineCents != 0 {
			t.Errorf("checkin I%05d: %+v", i, r)
		}
	}

	_, err := e.checkout("P0002", "I00006")
	b := wantBlocked(t, err, false, circulation.BlockFines)
	wantContains(t, b.Blocks[0].Message, "12.50", "5.00")
	e.mustCheckout("P0002", "I00006", circulation.BlockFines)
	for i := 7; i <= 10; i++ {
		e.mustCheckout("P0002", fmt.Sprintf("I%05d", i), circulation.BlockFines)
	}
	var visit []circulation.Loan
	err = e.d.Read(ctx, func(tx *db.Tx) error {
		var err error
		visit, err = circulation.PatronLoans(tx, e.patronID("P0002"))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range visit {
		if !l.IssuedAt.Before(dbtest.Monday) {
			got = append(got, l.Barcode)
		}
	}
	slices.Sort(got)
	if fmt.Sprint(got) != "[I00006 I00007 I00008 I00009 I00010]" {
		t.Errorf("loans of the visit %v", got)
	}
	for _, l := range visit {
		if l.Barcode == "I00010" && l.Title != "The Left Hand of Darkness" {
			t.Errorf("I00010 is %q", l.Title)
		}
	}
}

// goodPatrons returns cards of patrons who may borrow without any block.
func (e *env) goodPatrons(n int) []string {
	e.tb.Helper()
	cards := e.queryStrings(`SELECT p.card FROM patrons p
		WHERE p.blocked = 0 AND p.expires_on > '2026-12-31' AND p.category_id = 1
		  AND coalesce((SELECT sum(amount_cents) FROM ledger WHERE patron_id = p.id), 0) <= 500
		  AND (SELECT count(*) FROM loans WHERE patron_id = p.id AND returned_at IS NULL) < 15
		ORDER BY p.id LIMIT ?`, n)
	if len(cards) < 2 {
		e.tb.Fatalf("only %d patrons in good standing", len(cards))
	}
	return cards
}

func TestCheckoutConcurrent(t *testing.T) {
	const workers = 20

	// race runs workers checkouts of one barcode at once, worker i for cards[i%len],
	// and checks that exactly one loan was made and the rest were told why.
	race := func(t *testing.T, e *env, barcode string, cards []string, accept ...string) {
		t.Helper()
		ids := make([]int64, len(cards))
		for i, c := range cards {
			ids[i] = e.patronID(c)
		}
		var wg sync.WaitGroup
		start := make(chan struct{})
		errs := make([]error, workers)
		for i := 0; i < workers; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				<-start
				_, errs[i] = e.svc.Checkout(context.Background(), circulation.CheckoutRequest{
					Actor: e.desk, PatronID: ids[i%len(ids)], Barcode: barcode})
			}(i)
		}
		close(start)
		wg.Wait()
		ok := 0
		for i, err := range errs {
			var b *circulation.BlockedError
			switch {
			case err == nil:
				ok++
			case errors.As(err, &b):
				if b.Refused() || len(b.Blocks) != 1 || !contains(accept, b.Blocks[0].Code) {
					t.Errorf("worker %d: blocked by %v, want one of %v", i, b.Codes(), accept)
				}
			case stacks.ErrorCode(err) == stacks.ECONFLICT:
			default:
				t.Errorf("worker %d: %v (code %s), want a block or a conflict", i, err, stacks.ErrorCode(err))
			}
		}
		if ok != 1 {
			t.Errorf("%d checkouts succeeded, want exactly 1", ok)
		}
		if n := e.currentLoans(barcode); n != 1 {
			t.Errorf("%d current loans of %s, want 1", n, barcode)
		}
	}

	t.Run("SameScanTwice", func(t *testing.T) {
		e := newEnv(t)
		race(t, e, "I00001", []string{"P0001"}, circulation.BlockRenew, circulation.BlockOnLoanToOther)
		if got := e.queryInt(`SELECT renewals FROM loans WHERE item_id = ? AND returned_at IS NULL`, e.itemID("I00001")); got != 0 {
			t.Errorf("a rescan renewed the loan %d times without confirmation", got)
		}
	})

	t.Run("TwoDesks", func(t *testing.T) {
		e := newEnvWith(t, db.Options{}, demo.Options{Titles: 100, Patrons: 60})
		cards := e.goodPatrons(workers)
		race(t, e, "I00002", cards, circulation.BlockOnLoanToOther, circulation.BlockRenew)
	})
}

// TestCheckoutLibraryTimeZone: a library in New York. Due dates fall at 20:00
// local time on local open days, late days are local days, and a card is valid
// through its expiry day in local time.
func TestCheckoutLibraryTimeZone(t *testing.T) {
	newYorkEnv := func(t *testing.T) *env {
		e := newEnv(t)
		e.exec(`UPDATE preferences SET value = 'America/New_York' WHERE name = 'timezone'`)
		return e
	}

	t.Run("DueAtLocalClosing", func(t *testing.T) {
		e := newYorkEnv(t)
		e.clock.Set(at("2026-11-30 15:00")) // 10:00 in New York
		loan := e.mustCheckout("P0001", "I00001").Loan
		if want := at("2026-12-22 01:00"); !loan.DueAt.Equal(want) {
			t.Errorf("due %s, want %s (20:00 EST on Monday 21 December)", loan.DueAt, want)
		}
		// 22:00 in New York on the due day: late, but no open day has passed.
		e.clock.Set(at("2026-12-22 03:00"))
		if r := e.mustCheckin("I00001"); !r.Overdue || r.FineCents != 0 {
			t.Errorf("checkin the evening it was due: overdue %v, fine %d; want overdue, no fine", r.Overdue, r.FineCents)
		}
	})

	t.Run("LocalEveningIsStillToday", func(t *testing.T) {
		e := newYorkEnv(t)
		// Monday 22:00 in New York, already Tuesday in UTC: a one-day loan is due
		// Tuesday, not Wednesday.
		e.exec(`UPDATE circ_rules SET loan_period = 1 WHERE item_type_id = 1 AND patron_category_id IS NULL`)
		e.clock.Set(at("2026-12-01 03:00"))
		loan := e.mustCheckout("P0001", "I00001").Loan
		if want := at("2026-12-02 01:00"); !loan.DueAt.Equal(want) {
			t.Errorf("due %s, want %s", loan.DueAt, want)
		}
	})

	t.Run("CardValidThroughLocalExpiryDay", func(t *testing.T) {
		e := newYorkEnv(t)
		e.exec(`UPDATE patrons SET expires_on = '2026-11-30' WHERE card = 'P0001'`)
		e.clock.Set(at("2026-12-01 03:00")) // 22:00 on 30 November in New York
		e.mustCheckout("P0001", "I00001")
		e.clock.Set(at("2026-12-01 06:00")) // 01:00 on 1 December
		_, err := e.checkout("P0001", "I00002")
		b := wantBlocked(t, err, true, circulation.BlockCardExpired)
		wantContains(t, b.Blocks[0].Message, "2026-11-30")
	})
}
