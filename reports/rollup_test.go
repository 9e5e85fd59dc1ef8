package reports_test

import (
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/circulation"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/library"
	"github.com/stacks-ils/stacks/patrons"
	"github.com/stacks-ils/stacks/reports"
)

// TestRollup: a loan the desk makes is counted by the circulation report once it
// is rolled up (not before: the desk writes no statistics), once only, whatever
// happens to it after (a renewal, a return); an item's history shows it at once.
func TestRollup(t *testing.T) {
	d := mustSmallDemo(t)
	ctx := context.Background()
	today := url.Values{"from": {demoNow.Format(db.DayFormat)}, "to": {demoNow.Format(db.DayFormat)}, "group": {"month"}}
	before := run(t, d, "circulation", today).Total

	svc := circulation.NewService(d, library.NewPreferenceCache(false))
	desk := stacks.Actor{Name: "desk", BranchID: 1}
	var p *patrons.Patron
	if err := d.Read(ctx, func(tx *db.Tx) (err error) { p, err = patrons.FindByCard(tx, "P0001"); return err }); err != nil {
		t.Fatal(err)
	}
	out, err := svc.Checkout(ctx, circulation.CheckoutRequest{Actor: desk, PatronID: p.ID, Barcode: "I00001"})
	if err != nil {
		t.Fatal(err)
	}
	history := func() int {
		var h circulation.History
		if err := d.Read(ctx, func(tx *db.Tx) (err error) {
			var id int64
			if err := tx.QueryRow(`SELECT id FROM items WHERE barcode = 'I00001'`).Scan(&id); err != nil {
				return err
			}
			h, err = circulation.ItemHistory(tx, id, 0)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return len(h.Loans)
	}
	loans := history()
	if got := run(t, d, "circulation", today).Total; got != before {
		t.Errorf("before the rollup the report counts %d loans, want %d (as last rolled up)", got, before)
	}
	if n, err := reports.Rollup(ctx, d); err != nil || n != 1 {
		t.Fatalf("rollup: %d loans, %v; want 1", n, err)
	}
	if got := run(t, d, "circulation", today).Total; got != before+1 {
		t.Errorf("after the rollup the report counts %d loans, want %d", got, before+1)
	}
	if got := history(); got != loans {
		t.Errorf("the item's history has %d loans after the rollup, %d before", got, loans)
	}
	// A week later (a renewal on the day of the loan would not move its due date).
	now := d.Now()
	d.Now = func() time.Time { return now.AddDate(0, 0, 7) }
	renewed, err := svc.Renew(ctx, circulation.RenewRequest{Actor: desk, PatronID: p.ID, LoanIDs: []int64{out.Loan.ID}})
	if err != nil {
		t.Fatal(err)
	}
	if len(renewed) != 1 || !renewed[0].OK {
		t.Fatalf("renewal: %+v, want the loan renewed", renewed)
	}
	if _, err := svc.Checkin(ctx, circulation.CheckinRequest{Actor: desk, Barcode: "I00001"}); err != nil {
		t.Fatal(err)
	}
	if n, err := reports.Rollup(ctx, d); err != nil || n != 0 {
		t.Fatalf("rollup after a renewal and a return: %d loans, %v; want 0", n, err)
	}
	if got := run(t, d, "circulation", today).Total; got != before+1 {
		t.Errorf("after a renewal and a return the report counts %d loans, want %d", got, before+1)
	}
	if got := history(); got != loans {
		t.Errorf("the item's history has %d loans, want %d", got, loans)
	}
}
