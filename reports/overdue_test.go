package reports_test

import (
	"context"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/circulation"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/library"
	"github.com/stacks-ils/stacks/patrons"
	"github.com/stacks-ils/stacks/reports"
)

// overdue runs the overdue report (every row) and returns it with the count of
// overdue loans read straight from loans.
func overdue(t *testing.T, d *db.DB, f reports.Filter) (reports.Result, int) {
	t.Helper()
	def, err := reports.Find("overdue")
	if err != nil {
		t.Fatal(err)
	}
	var res reports.Result
	var want int
	if err := d.Read(context.Background(), func(tx *db.Tx) (err error) {
		if res, err = def.Run(tx, f); err != nil {
			return err
		}
		return tx.QueryRow(`SELECT count(*) FROM loans WHERE returned_at IS NULL AND due_at < ?`, db.FormatTime(tx.Now())).Scan(&want)
	}); err != nil {
		t.Fatal(err)
	}
	return res, want
}

func listed(res reports.Result, barcode string) bool {
	return slices.ContainsFunc(res.Rows, func(r []string) bool { return r[2] == barcode })
}

// TestOverdueOpenLoans: the overdue report finds every overdue loan, whether it
// has been rolled up into open_loans or not, leaves out a loan returned since the
// rollup before the open loans are pruned, and after.
func TestOverdueOpenLoans(t *testing.T) {
	d := mustSmallDemo(t)
	ctx := context.Background()
	now := demoNow
	d.Now = func() time.Time { return now }
	svc := circulation.NewService(d, library.NewPreferenceCache(false))
	desk := stacks.Actor{Name: "desk", BranchID: 1}
	var p *patrons.Patron
	if err := d.Read(ctx, func(tx *db.Tx) (err error) { p, err = patrons.FindByCard(tx, "P0001"); return err }); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Checkout(ctx, circulation.CheckoutRequest{Actor: desk, PatronID: p.ID, Barcode: "I00001"}); err != nil {
		t.Fatal(err)
	}
	all := reports.Filter{All: true}
	check := func(name string, want bool) {
		t.Helper()
		res, n := overdue(t, d, all)
		if res.Total != n || len(res.Rows) != n {
			t.Errorf("%s: %d overdue (%d rows), loans has %d", name, res.Total, len(res.Rows), n)
		}
		if listed(res, "I00001") != want {
			t.Errorf("%s: I00001 listed %v, want %v", name, !want, want)
		}
	}
	check("due in 21 days", false)
	now = demoNow.AddDate(0, 0, 40)
	check("overdue, not rolled up", true)
	if _, err := reports.Rollup(ctx, d); err != nil {
		t.Fatal(err)
	}
	check("overdue, rolled up", true)
	if _, err := svc.Checkin(ctx, circulation.CheckinRequest{Actor: desk, Barcode: "I00001"}); err != nil {
		t.Fatal(err)
	}
	check("returned, open loans not pruned", false)
	if err := reports.PruneOpenLoans(ctx, d); err != nil {
		t.Fatal(err)
	}
	check("returned, pruned", false)
	var left, open int
	if err := d.Read(ctx, func(tx *db.Tx) error {
		if err := tx.QueryRow(`SELECT count(*) FROM open_loans o JOIN loans l ON l.id = o.loan_id JOIN items i ON i.id = l.item_id
			WHERE i.barcode = 'I00001'`).Scan(&left); err != nil {
			return err
		}
		return tx.QueryRow(`SELECT (SELECT count(*) FROM open_loans) - (SELECT count(*) FROM loans WHERE returned_at IS NULL)`).Scan(&open)
	}); err != nil {
		t.Fatal(err)
	}
	if left != 0 || open != 0 {
		t.Errorf("after pruning: I00001 in open_loans %d times, open_loans - current loans = %d; want 0, 0", left, open)
	}
}

// TestOverduePagesAndStream: the overdue pages, one after the other, hold every
// row of the CSV file in the same order, and the file's rows can be streamed
// (Filter.Emit) instead of collected, the same rows.
func TestOverduePagesAndStream(t *testing.T) {
	d, _ := mustDemo(t)
	whole, n := overdue(t, d, reports.Filter{All: true})
	if n == 0 || whole.Total != n {
		t.Fatalf("%d overdue, loans has %d", whole.Total, n)
	}
	var paged [][]string
	pages := 0
	for page := 1; ; page++ {
		res, _ := overdue(t, d, reports.Filter{Page: page})
		if res.Total != n || res.Page != page || res.Pages != (n+reports.PageRows-1)/reports.PageRows {
			t.Fatalf("page %d: total %d, page %d of %d", page, res.Total, res.Page, res.Pages)
		}
		if len(res.Rows) > reports.PageRows {
			t.Fatalf("page %d has %d rows", page, len(res.Rows))
		}
		paged = append(paged, res.Rows...)
		pages = res.Pages
		if page >= res.Pages {
			break
		}
	}
	if !slices.EqualFunc(paged, whole.Rows, slices.Equal[[]string]) {
		t.Errorf("%d pages hold %d rows, not the file's %d in its order", pages, len(paged), len(whole.Rows))
	}
	var streamed [][]string
	res, _ := overdue(t, d, reports.Filter{All: true, Emit: func(cols []reports.Column, row []string) error {
		if len(cols) != len(row) {
			t.Errorf("%d columns, %d cells", len(cols), len(row))
		}
		streamed = append(streamed, slices.Clone(row))
		return nil
	}})
	if len(res.Rows) != 0 || res.Total != n || !slices.EqualFunc(streamed, whole.Rows, slices.Equal[[]string]) {
		t.Errorf("streamed %d rows (%d collected besides), want the file's %d", len(streamed), len(res.Rows), len(whole.Rows))
	}
}

// TestMostBorrowedBothWays: most borrowed titles counts the same as the loans
// themselves whichever way it reads them: in title order (every loan, an
// open-ended period) or in time order (one day's loans).
func TestMostBorrowedBothWays(t *testing.T) {
	d, _ := mustDemo(t)
	for _, tc := range []struct {
		name     string
		from, to string
	}{
		{"AllTime", "", ""},
		{"OneDay", "2026-11-20", "2026-11-20"},
		{"Year", "2025-12-01", "2026-11-30"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := run(t, d, "most-borrowed", url.Values{"from": {tc.from}, "to": {tc.to}, "limit": {"10"}})
			var want []string
			if err := d.Read(context.Background(), func(tx *db.Tx) error {
				lo, hi := "0000", "9999"
				if tc.from != "" {
					lo, hi = tc.from, tc.to+"T99"
				}
				rows, err := tx.Query(`SELECT count(*) FROM loans l JOIN items i ON i.id = l.item_id
					WHERE l.issued_at >= ? AND l.issued_at < ? GROUP BY i.record_id ORDER BY 1 DESC LIMIT 10`, lo, hi)
				if err != nil {
					return err
				}
				defer rows.Close()
				for rows.Next() {
					var n string
					if err := rows.Scan(&n); err != nil {
						return err
					}
					want = append(want, n)
				}
				return rows.Err()
			}); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range res.Rows {
				got = append(got, r[3])
			}
			if len(want) == 0 || !slices.Equal(got, want) {
				t.Errorf("loans of the top titles %v, the loans give %v", got, want)
			}
		})
	}
}
