package circulation_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/circulation"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/dbtest"
)

// circCheck runs circulation.Check on the env's database.
func (e *env) circCheck() []stacks.Violation {
	e.tb.Helper()
	var vs []stacks.Violation
	err := e.d.Read(context.Background(), func(tx *db.Tx) (err error) {
		vs, err = circulation.Check(tx)
		return err
	})
	if err != nil {
		e.tb.Fatal(err)
	}
	return vs
}

// corrupt breaks the database as a bug or a hand edit could, with the
// statements the same on both engines (dbtest.Corrupt: the foreign keys off, the
// CHECK constraints on; none of the corruptions below needs one off).
func (e *env) corrupt(stmts ...string) {
	e.tb.Helper()
	dbtest.Corrupt(e.tb, e.d, stmts...)
}

// wantViolations checks that vs holds a violation of check whose detail contains
// each of details, and nothing but violations of check.
func wantViolations(tb testing.TB, vs []stacks.Violation, check string, details ...string) {
	tb.Helper()
	for _, v := range vs {
		if v.Check != check {
			tb.Errorf("unexpected violation %s", v)
		}
	}
	for _, d := range details {
		found := false
		for _, v := range vs {
			found = found || strings.Contains(v.Detail, d)
		}
		if !found {
			tb.Errorf("no %s violation mentions %q; got %v", check, d, vs)
		}
	}
}

func TestCheckInvariants(t *testing.T) {
	// The first current loan of the demo library, the item it lends, and a loan
	// already returned.
	const firstLoan = `(SELECT min(id) FROM loans WHERE returned_at IS NULL)`
	for _, tc := range []struct {
		name    string
		stmts   []string
		check   string
		details []string
	}{
		{"ErrItemAvailableAndOnLoan", []string{
			`UPDATE items SET status = 'available' WHERE id = (SELECT item_id FROM loans WHERE id = ` + firstLoan + `)`,
		}, "loan-item-not-on-loan", []string{"has the status available, but loan"}},
		{"ErrItemMissingAndOnLoan", []string{
			`UPDATE items SET status = 'missing' WHERE id = (SELECT item_id FROM loans WHERE id = ` + firstLoan + `)`,
		}, "loan-item-not-on-loan", []string{"has the status missing"}},
		{"ErrOnLoanWithoutLoan", []string{
			`UPDATE items SET status = 'on_loan' WHERE barcode = 'I00003'`,
		}, "item-on-loan-without-loan", []string{"item I00003 (id"}},
		{"ErrTwoCurrentLoans", []string{
			`DROP INDEX loans_current_item`,
			`INSERT INTO loans (item_id, patron_id, branch_id, issued_at, due_at)
				SELECT item_id, (SELECT id FROM patrons WHERE card = 'P0001'), branch_id, issued_at, due_at FROM loans WHERE id = ` + firstLoan,
		}, "item-several-current-loans", []string{"has 2 current loans"}},
		{"ErrLoanWithoutItem", []string{
			`INSERT INTO loans (item_id, patron_id, branch_id, issued_at, due_at, returned_at)
				VALUES (987654, 1, 1, '2026-11-01T10:00:00Z', '2026-11-22T20:00:00Z', '2026-11-10T10:00:00Z')`,
		}, "loan-without-item", []string{"names item id 987654"}},
		{"ErrLoanWithoutPatron", []string{
			`INSERT INTO loans (item_id, patron_id, branch_id, issued_at, due_at, returned_at)
				VALUES (1, 876543, 1, '2026-11-01T10:00:00Z', '2026-11-22T20:00:00Z', '2026-11-10T10:00:00Z')`,
		}, "loan-without-patron", []string{"names patron id 876543"}},
		{"ErrLoanDueBeforeIssued", []string{
			`UPDATE loans SET due_at = '2001-01-01T00:00:00Z' WHERE id = ` + firstLoan,
		}, "loan-dates", []string{"is due 2001-01-01T00:00:00Z"}},
		{"ErrLoanReturnedBeforeIssued", []string{
			`UPDATE loans SET returned_at = '2001-01-01T00:00:00Z' WHERE id = (SELECT min(id) FROM loans WHERE returned_at IS NOT NULL)`,
		}, "loan-dates", []string{"returned 2001-01-01T00:00:00Z"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			if vs := e.circCheck(); len(vs) != 0 {
				t.Fatalf("the demo library has violations before the test breaks it: %v", vs)
			}
			e.corrupt(tc.stmts...)
			wantViolations(t, e.circCheck(), tc.check, tc.details...)
		})
	}
}

// TestCheckAfterDeskWork runs the desk's operations, with the holds and fines they
// bring, and finds the invariants kept after each kind.
func TestCheckAfterDeskWork(t *testing.T) {
	e := newEnv(t)
	books := []string{e.freeItem("BOOK", 1), "I00001", "I00002"}
	for _, b := range books {
		e.mustCheckout("P0001", b)
	}
	// A hold on a copy out on loan: its checkin traps it for P0003 at Central.
	e.addHold("P0003", "I00002", 1, false)
	e.mustCheckin("I00002")
	// A late return with a fine.
	e.clock.Set(dbtest.Monday.AddDate(0, 0, 30))
	e.mustCheckin("I00001")
	if vs := e.circCheck(); len(vs) != 0 {
		t.Fatalf("after checkouts, a trapping checkin and a late return: %v", vs)
	}
	// Returned at another branch: in transit home.
	if _, err := e.checkinAt(2, books[0], ""); err != nil {
		t.Fatal(err)
	}
	if vs := e.circCheck(); len(vs) != 0 {
		t.Fatalf("after a checkin elsewhere: %v", vs)
	}
}
