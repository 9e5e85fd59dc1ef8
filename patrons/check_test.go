package patrons_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/dbtest"
	"github.com/stacks-ils/stacks/patrons"
)

func ledgerCheck(tb testing.TB, d *db.DB) []stacks.Violation {
	tb.Helper()
	var vs []stacks.Violation
	read(tb, d, func(tx *db.Tx) (err error) {
		vs, err = patrons.Check(tx)
		return err
	})
	return vs
}

func TestCheckInvariants(t *testing.T) {
	const (
		p1   = `(SELECT id FROM patrons WHERE card = 'P0001')`
		p2   = `(SELECT id FROM patrons WHERE card = 'P0002')`
		when = `'2026-11-30T10:00:00Z'`
	)
	for _, tc := range []struct {
		name    string
		stmts   []string
		check   string
		details []string
	}{
		{"ErrChargeNegative", []string{
			`INSERT INTO ledger (patron_id, kind, amount_cents, created_at) VALUES (` + p1 + `, 'fee', -300, ` + when + `)`,
		}, "ledger-sign", []string{"of patron P0001 (id", "is a fee of -3.00; charges and refunds are positive"}},
		{"ErrPaymentPositive", []string{
			`INSERT INTO ledger (patron_id, kind, amount_cents, created_at) VALUES (` + p2 + `, 'payment', 200, ` + when + `)`,
		}, "ledger-sign", []string{"is a payment of 2.00; payments, waivers, voids and credits are negative"}},
		{"ErrOverpaid", []string{
			// P0002 owes 12.50.
			`INSERT INTO ledger (patron_id, kind, amount_cents, created_at) VALUES (` + p2 + `, 'payment', -2000, ` + when + `)`,
		}, "ledger-overpaid", []string{"a payment of 20.00, brought the balance of patron P0002", "to -7.50"}},
		{"ErrWaivedWhatWasNotOwed", []string{
			`INSERT INTO ledger (patron_id, kind, amount_cents, created_at) VALUES (` + p1 + `, 'waiver', -100, ` + when + `)`,
			// A later charge does not make the waiver right.
			`INSERT INTO ledger (patron_id, kind, amount_cents, created_at) VALUES (` + p1 + `, 'fee', 500, ` + when + `)`,
		}, "ledger-overpaid", []string{"a waiver of 1.00, brought the balance of patron P0001", "to -1.00"}},
		{"ErrChargeForAnotherPatronsLoan", []string{
			`INSERT INTO ledger (patron_id, kind, amount_cents, loan_id, created_at)
				SELECT ` + p1 + `, 'overdue', 100, min(id), ` + when + ` FROM loans WHERE patron_id <> ` + p1,
		}, "ledger-loan-patron", []string{"charges patron P0001", "which is a loan to patron"}},
		{"ErrWithoutPatron", []string{
			`INSERT INTO ledger (patron_id, kind, amount_cents, created_at) VALUES (765432, 'fee', 100, ` + when + `)`,
		}, "ledger-without-patron", []string{"names patron id 765432"}},
		{"ErrRefundOverCredit", []string{
			// P0001 owes nothing: a refund hands back money they never had in credit.
			`INSERT INTO ledger (patron_id, kind, amount_cents, created_at, payment_method, branch_id) VALUES (` + p1 + `, 'refund', 300, ` + when + `, 'cash', 1)`,
		}, "ledger-refund-over-credit", []string{"a refund of 3.00, brought the balance of patron P0001", "to 3.00"}},
		{"ErrAllocationOverPayment", []string{
			`INSERT INTO ledger (id, patron_id, kind, amount_cents, created_at) VALUES (900001, ` + p2 + `, 'fee', 1000, ` + when + `)`,
			`INSERT INTO ledger (id, patron_id, kind, amount_cents, created_at, payment_method, branch_id) VALUES (900002, ` + p2 + `, 'payment', -100, ` + when + `, 'card', 1)`,
			`INSERT INTO ledger_allocations (payment_id, charge_id, amount_cents) VALUES (900002, 900001, 400)`,
		}, "ledger-allocation", []string{"payment 900002 (payment, 1.00) allocates 4.00 to charges, more than it paid"}},
		{"ErrReversalOfAnotherPatron", []string{
			`INSERT INTO ledger (id, patron_id, kind, amount_cents, created_at) VALUES (900001, ` + p2 + `, 'fee', 1000, ` + when + `)`,
			`INSERT INTO ledger (patron_id, kind, amount_cents, created_at, reverses_id) VALUES (` + p2 + `, 'void', -1000, ` + when + `, 900001)`,
			`INSERT INTO ledger (patron_id, kind, amount_cents, created_at, reverses_id) VALUES (` + p1 + `, 'void', -100, ` + when + `, 900001)`,
		}, "ledger-reversal", []string{"reverses row 900001, a line of another patron", "charge 900001 (fee of 10.00) is reversed 11.00"}},
		{"ErrCreditOfAWaiver", []string{
			// The review's case: a waived charge credited back, which the desk
			// could then refund in cash.
			`INSERT INTO ledger (id, patron_id, kind, amount_cents, created_at) VALUES (900001, ` + p1 + `, 'lost', 2500, ` + when + `)`,
			`INSERT INTO ledger (id, patron_id, kind, amount_cents, created_at) VALUES (900002, ` + p1 + `, 'waiver', -2500, ` + when + `)`,
			`INSERT INTO ledger_allocations (payment_id, charge_id, amount_cents) VALUES (900002, 900001, 2500)`,
			// An id of its own after the waiver's: PostgreSQL's identity would
			// give it one below 900001 (SQLite's rowid follows the largest).
			`INSERT INTO ledger (id, patron_id, kind, amount_cents, created_at, reverses_id) VALUES (900003, ` + p1 + `, 'credit', -2500, ` + when + `, 900001)`,
		}, "ledger-credit-over-paid", []string{"charge 900001 (lost of 25.00, patron P0001) is credited back 25.00, but only 0.00 was paid toward it"}},
		{"ErrMethodWithoutDesk", []string{
			`INSERT INTO ledger (patron_id, kind, amount_cents, created_at, payment_method) VALUES (` + p2 + `, 'payment', -100, ` + when + `, 'cash')`,
		}, "ledger-desk", []string{"has a payment method but no desk branch"}},
		{"ErrLostBilledTwice", []string{
			`INSERT INTO ledger (patron_id, kind, amount_cents, loan_id, created_at)
				SELECT patron_id, 'lost', 900, id, ` + when + ` FROM loans WHERE id = (SELECT min(id) FROM loans)`,
			`INSERT INTO ledger (patron_id, kind, amount_cents, loan_id, created_at)
				SELECT patron_id, 'lost', 900, id, ` + when + ` FROM loans WHERE id = (SELECT min(id) FROM loans)`,
		}, "lost-loan-billed-once", []string{"lost lines; a lost loan is billed once"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := mustOpenDB(t)
			if vs := ledgerCheck(t, d); len(vs) != 0 {
				t.Fatalf("the demo library has violations before the test breaks it: %v", vs)
			}
			dbtest.Corrupt(t, d, tc.stmts...)
			vs := ledgerCheck(t, d)
			for _, v := range vs {
				if v.Check != tc.check {
					t.Errorf("unexpected violation %s", v)
				}
			}
			for _, want := range tc.details {
				found := false
				for _, v := range vs {
					found = found || strings.Contains(v.Detail, want)
				}
				if !found {
					t.Errorf("no %s violation mentions %q; got %v", tc.check, want, vs)
				}
			}
		})
	}
}

// TestCheckPurgedRows: a settled row whose patron was purged (patron_id NULL, as
// the privacy purge leaves it) breaks no invariant.
func TestCheckPurgedRows(t *testing.T) {
	d := mustOpenDB(t)
	dbtest.Corrupt(t, d,
		`INSERT INTO ledger (id, patron_id, kind, amount_cents, created_at) VALUES (900001, NULL, 'fee', 500, '2026-11-30T10:00:00Z')`,
		`INSERT INTO ledger (id, patron_id, kind, amount_cents, created_at, payment_method, branch_id) VALUES (900002, NULL, 'payment', -500, '2026-11-30T10:00:00Z', 'cash', 1)`,
		`INSERT INTO ledger_allocations (payment_id, charge_id, amount_cents) VALUES (900002, 900001, 500)`)
	if vs := ledgerCheck(t, d); len(vs) != 0 {
		t.Fatalf("purged rows: %v", vs)
	}
}

// TestCheckAfterPayments: paying and waiving through Pay and Waive, up to the whole
// balance, keeps the ledger balanced.
func TestCheckAfterPayments(t *testing.T) {
	d := mustOpenDB(t)
	mustExec(t, d, `UPDATE staff_users SET can_waive = 1 WHERE id = ?`, desk.StaffID)
	var id int64
	read(t, d, func(tx *db.Tx) error {
		p, err := patrons.FindByCard(tx, "P0002")
		id = p.ID
		return err
	})
	err := d.Write(context.Background(), func(tx *db.Tx) error {
		if err := pay(tx, id, 250, "cash"); err != nil {
			return err
		}
		if err := waiveOldest(tx, id, 500, "first offence"); err != nil {
			return err
		}
		if err := pay(tx, id, 500, ""); err != nil {
			return err
		}
		// Nothing is owed now: one more cent is refused.
		if err := pay(tx, id, 1, ""); err == nil {
			t.Error("a payment beyond the balance was accepted")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if vs := ledgerCheck(t, d); len(vs) != 0 {
		t.Fatalf("after payments and a waiver: %v", vs)
	}
}
