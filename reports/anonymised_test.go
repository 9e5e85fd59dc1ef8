package reports_test

import (
	"context"
	"database/sql"
	"net/url"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/circulation"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/dbtest"
	"github.com/stacks-ils/stacks/library"
	"github.com/stacks-ils/stacks/patrons"
	"github.com/stacks-ils/stacks/reports"
)

// orphanLoan makes loan id point at no patron. On SQLite it does so through a
// connection of its own with foreign keys off: what an anonymised loan of issue
// 16 (patron_id NULL) looks like to a query that joins loans to patrons, before
// migration 0013 makes the column nullable. PostgreSQL (engine-specific: the
// counterpart) enforces every foreign key and has no database before 0013, so
// there the loan is anonymised as today: patron_id NULL, through d.
func orphanLoan(t *testing.T, d *db.DB, id int64) {
	t.Helper()
	if dbtest.Engine() == db.Postgres {
		if err := d.Write(context.Background(), func(tx *db.Tx) error {
			_, err := tx.Exec(`UPDATE loans SET patron_id = NULL WHERE id = ?`, id)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return
	}
	path := d.Path()
	c, err := sql.Open("sqlite", path+"?_pragma=foreign_keys(0)&_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Exec(`UPDATE loans SET patron_id = -1 WHERE id = ?`, id); err != nil {
		t.Fatal(err)
	}
}

// TestAnonymisedLoanCounted: a loan without its patron (anonymised) is
// still counted by the circulation report, by month and by patron category alike
// (the category is unknown: "Unknown"), and the item's history keeps it without a
// patron.
func TestAnonymisedLoanCounted(t *testing.T) {
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
	orphanLoan(t, d, out.Loan.ID)
	if _, err := reports.Rollup(ctx, d); err != nil {
		t.Fatal(err)
	}
	if got := run(t, d, "circulation", today).Total; got != before+1 {
		t.Errorf("by month: %d loans, want %d (the anonymised one counted)", got, before+1)
	}
	today.Set("group", "category")
	res := run(t, d, "circulation", today)
	if res.Total != before+1 {
		t.Errorf("by category: %d loans, want %d", res.Total, before+1)
	}
	unknown := false
	for _, r := range res.Rows {
		unknown = unknown || r[0] == "Unknown"
	}
	if !unknown {
		t.Errorf("by category: no row for the loan without a category: %v", res.Rows)
	}
	var h, ph circulation.History
	if err := d.Read(ctx, func(tx *db.Tx) (err error) {
		if h, err = circulation.ItemHistory(tx, out.Loan.ItemID, 0); err != nil {
			return err
		}
		ph, err = circulation.PatronHistory(tx, p.ID, 0)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if len(h.Loans) == 0 || h.Loans[0].LoanID != out.Loan.ID || !h.Loans[0].Anonymised() || h.Loans[0].PatronName != "" {
		t.Errorf("item history: %+v; want the loan first, anonymised", h.Loans)
	}
	for _, l := range ph.Loans {
		if l.LoanID == out.Loan.ID {
			t.Errorf("the patron's history still lists the anonymised loan")
		}
	}
}
