package circulation_test

import (
	"context"
	"testing"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/circulation"
	"github.com/stacks-ils/stacks/db/dbtest"
)

// renew renews the loans of the patron with card at Central.
func (e *env) renew(card string, all bool, loanIDs ...int64) ([]circulation.RenewResult, error) {
	e.tb.Helper()
	return e.svc.Renew(context.Background(), circulation.RenewRequest{Actor: e.desk, PatronID: e.patronID(card), LoanIDs: loanIDs, All: all})
}

// mustRenewOne renews one loan and returns its result.
func (e *env) mustRenewOne(card string, loanID int64) circulation.RenewResult {
	e.tb.Helper()
	rs, err := e.renew(card, false, loanID)
	if err != nil {
		e.tb.Fatal(err)
	}
	if len(rs) != 1 {
		e.tb.Fatalf("%d results for one loan", len(rs))
	}
	return rs[0]
}

func TestRenew(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		e := newEnv(t)
		loan := e.mustCheckout("P0001", "I00001").Loan
		// A week later: 21 days from Monday 7 December is Monday 28th.
		e.clock.Set(at("2026-12-07 10:00"))
		r := e.mustRenewOne("P0001", loan.ID)
		if !r.OK || r.FineCents != 0 {
			t.Fatalf("result %+v", r)
		}
		if want := at("2026-12-28 20:00"); !r.Loan.DueAt.Equal(want) {
			t.Errorf("due %s, want %s", r.Loan.DueAt, want)
		}
		if r.Loan.Renewals != 1 || r.Loan.RenewalsAllowed != 2 || r.Loan.ID != loan.ID {
			t.Errorf("loan %+v", r.Loan)
		}
		wantContains(t, r.Message, "Pride and Prejudice", "2026-12-28")
		if got := e.queryString(`SELECT due_at || ' ' || renewals FROM loans WHERE id = ?`, loan.ID); got != "2026-12-28T20:00:00Z 1" {
			t.Errorf("loan row %q", got)
		}
	})

	t.Run("OKOverHolidays", func(t *testing.T) {
		e := newEnv(t)
		loan := e.mustCheckout("P0001", "I00001").Loan
		e.clock.Set(at("2026-12-04 10:00"))
		if r := e.mustRenewOne("P0001", loan.ID); !r.OK || !r.Loan.DueAt.Equal(at("2026-12-28 20:00")) {
			t.Errorf("result %+v", r)
		}
	})

	// A renewal that would move the due date earlier (a shorter loan period
	// since) is refused and not counted: the loan keeps its date.
	t.Run("ErrNeverEarlier", func(t *testing.T) {
		e := newEnv(t)
		loan := e.mustCheckout("P0001", "I00001").Loan
		e.exec(`UPDATE circ_rules SET loan_period = 7 WHERE item_type_id = 1 AND patron_category_id IS NULL`)
		e.clock.Set(at("2026-12-07 10:00"))
		r := e.mustRenewOne("P0001", loan.ID)
		if r.OK || r.Refusal != circulation.RenewNotMoved {
			t.Fatalf("result %+v, want refused as not moving the due date", r)
		}
		if got := e.queryString(`SELECT due_at || ' ' || renewals FROM loans WHERE id = ?`, loan.ID); got != "2026-12-21T20:00:00Z 0" {
			t.Errorf("loan row %q, want its due date kept and no renewal counted", got)
		}
	})

	// Renewing a loan the day it was made would not move its due date: refused
	// with the reason, no renewal used; the same through RenewItem (SIP, a
	// rescan at the desk).
	t.Run("ErrSameDay", func(t *testing.T) {
		e := newEnv(t)
		loan := e.mustCheckout("P0001", "I00001").Loan
		e.clock.Set(dbtest.Monday.Add(2 * time.Hour))
		r := e.mustRenewOne("P0001", loan.ID)
		if r.OK || r.Refusal != circulation.RenewNotMoved || r.Overridable {
			t.Fatalf("result %+v, want refused as not moving the due date, not overridable", r)
		}
		wantContains(t, r.Message, "Pride and Prejudice", "2026-12-21", "would not move", "No renewal was used")
		r, err := e.svc.RenewItem(context.Background(), e.desk, "I00001")
		if err != nil {
			t.Fatal(err)
		}
		if r.OK || r.Refusal != circulation.RenewNotMoved {
			t.Fatalf("RenewItem %+v, want refused as not moving the due date", r)
		}
		// An override does not renew it either: there is nothing to gain.
		rs, err := e.svc.Renew(context.Background(), circulation.RenewRequest{Actor: e.desk, PatronID: e.patronID("P0001"), LoanIDs: []int64{loan.ID}, Override: "Patron insists"})
		if err != nil {
			t.Fatal(err)
		}
		if rs[0].OK {
			t.Fatalf("an override renewed a loan made today: %+v", rs[0])
		}
		if got := e.queryString(`SELECT due_at || ' ' || renewals FROM loans WHERE id = ?`, loan.ID); got != "2026-12-21T20:00:00Z 0" {
			t.Errorf("loan row %q, want unchanged", got)
		}
	})

	t.Run("ErrRenewalLimit", func(t *testing.T) {
		e := newEnv(t)
		loan := e.mustCheckout("P0001", "I00001").Loan
		for i := 1; i <= 2; i++ {
			e.clock.Set(dbtest.Monday.AddDate(0, 0, 7*i))
			if r := e.mustRenewOne("P0001", loan.ID); !r.OK || r.Loan.Renewals != i {
				t.Fatalf("renewal %d: %+v", i, r)
			}
		}
		due := e.queryString(`SELECT due_at FROM loans WHERE id = ?`, loan.ID)
		e.clock.Set(dbtest.Monday.AddDate(0, 0, 21))
		r := e.mustRenewOne("P0001", loan.ID)
		if r.OK {
			t.Fatal("a third renewal went through")
		}
		wantContains(t, r.Message, "Pride and Prejudice", "2 of 2")
		if got := e.queryString(`SELECT due_at || ' ' || renewals FROM loans WHERE id = ?`, loan.ID); got != due+" 2" {
			t.Errorf("refused renewal changed the loan: %q", got)
		}
	})

	t.Run("ErrHoldNoOtherCopy", func(t *testing.T) {
		e := newEnv(t)
		loan := e.mustCheckout("P0001", "I00001").Loan
		e.addHold("P0003", "I00001", 1, false)
		r := e.mustRenewOne("P0001", loan.ID)
		if r.OK {
			t.Fatal("renewed over a hold with no other copy")
		}
		wantContains(t, r.Message, "Pride and Prejudice", "waiting")
		if r.Refusal != circulation.RenewOnHold || !r.Overridable {
			t.Errorf("refusal %q overridable %v, want %q and overridable", r.Refusal, r.Overridable, circulation.RenewOnHold)
		}
	})

	// Staff may override "another patron is waiting" and "renewed as many times
	// as allowed" with a reason: the loan is renewed and counted, and each
	// refusal overridden is in the audit log with the reason.
	t.Run("Override", func(t *testing.T) {
		e := newEnv(t)
		loan := e.mustCheckout("P0001", "I00001").Loan
		e.addHold("P0003", "I00001", 1, false)
		e.exec(`UPDATE loans SET renewals = 2 WHERE id = ?`, loan.ID)
		e.clock.Set(at("2026-12-07 10:00"))
		rs, err := e.svc.Renew(context.Background(), circulation.RenewRequest{Actor: e.desk, PatronID: e.patronID("P0001"),
			LoanIDs: []int64{loan.ID}, Override: "  Needed for an exam on Friday  "})
		if err != nil {
			t.Fatal(err)
		}
		r := rs[0]
		if !r.OK || r.Loan.Renewals != 3 || !r.Loan.DueAt.Equal(at("2026-12-28 20:00")) {
			t.Fatalf("result %+v, want renewed a third time to 28 December", r)
		}
		wantContains(t, r.Message, "override", "Needed for an exam on Friday", "2026-12-28")
		if got := e.queryString(`SELECT due_at || ' ' || renewals FROM loans WHERE id = ?`, loan.ID); got != "2026-12-28T20:00:00Z 3" {
			t.Errorf("loan row %q", got)
		}
		got := e.queryStrings(`SELECT detail FROM audit_log WHERE action = 'renew.override' AND object_type = 'loan' AND object_id = ? ORDER BY id`, loan.ID)
		if len(got) != 2 {
			t.Fatalf("audit %q, want one entry per refusal overridden", got)
		}
		wantContains(t, got[0], circulation.RenewTooMany, "2 of 2", "Reason: Needed for an exam on Friday")
		wantContains(t, got[1], circulation.RenewOnHold, "waiting", "Reason: Needed for an exam on Friday")
	})

	// An override does not reach the refusals staff cannot override (a blocked
	// patron), and a blank reason is no override.
	t.Run("ErrOverrideNotAllowed", func(t *testing.T) {
		e := newEnv(t)
		loan := e.mustCheckout("P0001", "I00001").Loan
		e.addHold("P0003", "I00001", 1, false)
		e.clock.Set(at("2026-12-07 10:00"))
		rs, err := e.svc.Renew(context.Background(), circulation.RenewRequest{Actor: e.desk, PatronID: e.patronID("P0001"), LoanIDs: []int64{loan.ID}, Override: "   "})
		if err != nil {
			t.Fatal(err)
		}
		if rs[0].OK {
			t.Fatal("a blank reason overrode a hold")
		}
		e.exec(`UPDATE patrons SET blocked = 1, block_note = 'Unpaid damage' WHERE card = 'P0001'`)
		rs, err = e.svc.Renew(context.Background(), circulation.RenewRequest{Actor: e.desk, PatronID: e.patronID("P0001"), LoanIDs: []int64{loan.ID}, Override: "Asked nicely"})
		if err != nil {
			t.Fatal(err)
		}
		if rs[0].OK || rs[0].Refusal != circulation.RenewBlocked || rs[0].Overridable {
			t.Fatalf("result %+v, want refused as blocked, not overridable", rs[0])
		}
		if n := e.queryInt(`SELECT count(*) FROM audit_log WHERE action = 'renew.override'`); n != 0 {
			t.Errorf("%d overrides audited, want none", n)
		}
		// Only staff override: not the patrons' site nor a self-check machine.
		_, err = e.svc.Renew(context.Background(), circulation.RenewRequest{Actor: stacks.Actor{Name: "opac:P0001", BranchID: 1},
			PatronID: e.patronID("P0001"), LoanIDs: []int64{loan.ID}, Override: "Please"})
		wantCode(t, err, stacks.EFORBIDDEN)
	})

	t.Run("HoldWithOtherCopyAvailable", func(t *testing.T) {
		e := newEnv(t)
		loan := e.mustCheckout("P0001", "I00001").Loan
		e.addCopy("I00001", "I00001B", 1)
		e.addHold("P0003", "I00001", 1, false)
		e.clock.Set(at("2026-12-07 10:00"))
		if r := e.mustRenewOne("P0001", loan.ID); !r.OK {
			t.Fatalf("refused: %s", r.Message)
		}
	})

	t.Run("ErrHoldOtherCopyOnLoan", func(t *testing.T) {
		e := newEnv(t)
		loan := e.mustCheckout("P0001", "I00001").Loan
		e.addCopy("I00001", "I00001B", 1)
		e.mustCheckout("P0003", "I00001B")
		e.addHold("P0002", "I00001", 1, false)
		if r := e.mustRenewOne("P0001", loan.ID); r.OK {
			t.Fatal("renewed over a hold whose only other copy is out")
		}
	})

	t.Run("ErrItemLevelHold", func(t *testing.T) {
		e := newEnv(t)
		loan := e.mustCheckout("P0001", "I00001").Loan
		e.addCopy("I00001", "I00001B", 1)
		e.addHold("P0003", "I00001", 1, true)
		if r := e.mustRenewOne("P0001", loan.ID); r.OK {
			t.Fatal("renewed over a hold on this very copy")
		}
	})

	t.Run("SuspendedHold", func(t *testing.T) {
		e := newEnv(t)
		loan := e.mustCheckout("P0001", "I00001").Loan
		hold := e.addHold("P0003", "I00001", 1, false)
		e.exec(`UPDATE holds SET suspended_until = '2027-01-15' WHERE id = ?`, hold)
		e.clock.Set(at("2026-12-07 10:00"))
		if r := e.mustRenewOne("P0001", loan.ID); !r.OK {
			t.Fatalf("refused over a suspended hold: %s", r.Message)
		}
	})

	t.Run("ErrCardExpired", func(t *testing.T) {
		e := newEnv(t)
		loan := e.mustCheckout("P0001", "I00001").Loan
		e.exec(`UPDATE patrons SET expires_on = '2026-12-01' WHERE card = 'P0001'`)
		e.clock.Set(at("2026-12-07 10:00"))
		r := e.mustRenewOne("P0001", loan.ID)
		if r.OK {
			t.Fatal("renewed for an expired card")
		}
		wantContains(t, r.Message, "P0001", "2026-12-01")
	})

	t.Run("ErrPatronBlocked", func(t *testing.T) {
		e := newEnv(t)
		loan := e.mustCheckout("P0001", "I00001").Loan
		e.exec(`UPDATE patrons SET blocked = 1, block_note = 'Unpaid damage' WHERE card = 'P0001'`)
		r := e.mustRenewOne("P0001", loan.ID)
		if r.OK {
			t.Fatal("renewed for a blocked patron")
		}
		wantContains(t, r.Message, "Alex Reader", "Unpaid damage")
	})

	t.Run("RenewAll", func(t *testing.T) {
		e := newEnv(t)
		a := e.mustCheckout("P0001", "I00001").Loan
		b := e.mustCheckout("P0001", "I00002").Loan
		c := e.mustCheckout("P0001", "I00003").Loan
		e.exec(`UPDATE loans SET renewals = 2 WHERE id = ?`, b.ID)
		e.mustCheckout("P0003", "I00004") // another patron's loan is not renewed
		e.clock.Set(at("2026-12-07 10:00"))
		rs, err := e.renew("P0001", true)
		if err != nil {
			t.Fatal(err)
		}
		if len(rs) != 3 {
			t.Fatalf("%d results, want one per loan", len(rs))
		}
		ok := map[int64]bool{}
		for _, r := range rs {
			ok[r.Loan.ID] = r.OK
		}
		if !ok[a.ID] || ok[b.ID] || !ok[c.ID] {
			t.Errorf("renewed %v, want all but the loan at its limit", ok)
		}
	})

	t.Run("Overdue", func(t *testing.T) {
		e := newEnv(t)
		loan := e.mustCheckout("P0001", "I00001").Loan
		// Due 21 December; on 30 December it is 6 open days late.
		e.clock.Set(at("2026-12-30 10:00"))
		r := e.mustRenewOne("P0001", loan.ID)
		if !r.OK || r.FineCents != 150 {
			t.Fatalf("result %+v, want renewed with a fine of 150", r)
		}
		if want := at("2027-01-20 20:00"); !r.Loan.DueAt.Equal(want) {
			t.Errorf("due %s, want %s", r.Loan.DueAt, want)
		}
		if got := e.queryInt(`SELECT amount_cents FROM ledger WHERE loan_id = ? AND kind = 'overdue'`, loan.ID); got != 150 {
			t.Errorf("ledger %d", got)
		}
		wantContains(t, e.queryString(`SELECT description FROM ledger WHERE loan_id = ?`, loan.ID), "renewal", "6 open days")

		// Returned on time for the new due date: nothing more to pay.
		e.clock.Set(at("2027-01-15 10:00"))
		if c := e.mustCheckin("I00001"); c.FineCents != 0 || c.Overdue {
			t.Errorf("checkin %+v", c)
		}
		if e.balance("P0001") != 150 {
			t.Errorf("balance %d", e.balance("P0001"))
		}
	})

	// The cap is per loan: a renewal's fine and the return's fine together stay
	// within it.
	t.Run("FineCapPerLoanAcrossRenewal", func(t *testing.T) {
		e := newEnv(t)
		loan := e.mustCheckout("P0001", "I00001").Loan
		// 15 open days late on Monday 11 January 2027: 3.75.
		e.clock.Set(at("2027-01-11 10:00"))
		r := e.mustRenewOne("P0001", loan.ID)
		if !r.OK || r.FineCents != 375 {
			t.Fatalf("renewal %+v, want a fine of 375", r)
		}
		// Due 1 February, back 1 March: 24 open days, 6.00 alone, capped at 5.00.
		e.clock.Set(at("2027-03-01 10:00"))
		e.mustCheckin("I00001")
		if got := e.queryInt(`SELECT sum(amount_cents) FROM ledger WHERE loan_id = ? AND kind = 'overdue'`, loan.ID); got != 500 {
			t.Errorf("overdue fines for one loan total %d, want the cap of 500", got)
		}
	})

	t.Run("ErrNothingSelected", func(t *testing.T) {
		e := newEnv(t)
		_, err := e.renew("P0001", false)
		wantCode(t, err, stacks.EINVALID)
	})

	t.Run("ErrLoanNotCurrent", func(t *testing.T) {
		e := newEnv(t)
		a := e.mustCheckout("P0001", "I00001").Loan
		b := e.mustCheckout("P0001", "I00002").Loan
		e.mustCheckin("I00002")
		e.clock.Set(at("2026-12-07 10:00"))
		_, err := e.renew("P0001", false, a.ID, b.ID)
		wantCode(t, err, stacks.ECONFLICT)
		// Nothing was renewed: the request is one transaction.
		if got := e.queryInt(`SELECT renewals FROM loans WHERE id = ?`, a.ID); got != 0 {
			t.Errorf("loan %d renewed %d times by a failed request", a.ID, got)
		}
	})

	t.Run("RenewItem", func(t *testing.T) {
		e := newEnv(t)
		e.mustCheckout("P0001", "I00001")
		e.clock.Set(at("2026-12-07 10:00"))
		r, err := e.svc.RenewItem(context.Background(), e.desk, "I00001")
		if err != nil {
			t.Fatal(err)
		}
		if !r.OK || r.Loan.Renewals != 1 || !r.Loan.DueAt.Equal(at("2026-12-28 20:00")) {
			t.Errorf("result %+v", r)
		}
	})

	t.Run("ErrRenewItemNotOnLoan", func(t *testing.T) {
		e := newEnv(t)
		_, err := e.svc.RenewItem(context.Background(), e.desk, "I00001")
		wantCode(t, err, stacks.ECONFLICT)
		_, err = e.svc.RenewItem(context.Background(), e.desk, "NOSUCH")
		wantCode(t, err, stacks.ENOTFOUND)
	})
}
