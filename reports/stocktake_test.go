package reports_test

import (
	"context"
	"sort"
	"strings"
	"testing"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/circulation"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/library"
	"github.com/stacks-ils/stacks/reports"
)

// shelf is a run of available items at Central in call number order, and one
// item from Eastside, one on loan, for a stocktake to find.
type shelf struct {
	items         []string
	from, to      string
	other, onLoan string
}

func findShelf(t *testing.T, d *db.DB) shelf {
	t.Helper()
	var s shelf
	err := d.Read(context.Background(), func(tx *db.Tx) error {
		// Five items in a row on Central's shelves, all available, with no other
		// item sharing the first's or the last's call number (or starting with
		// the last's).
		rows, err := tx.Query(`SELECT barcode, call_number, status FROM items WHERE home_branch_id = 1`)
		if err != nil {
			return err
		}
		type it struct{ barcode, call, status string }
		var all []it
		for rows.Next() {
			var x it
			if err := rows.Scan(&x.barcode, &x.call, &x.status); err != nil {
				rows.Close()
				return err
			}
			all = append(all, x)
		}
		rows.Close()
		// Shelf order: by call number key, then barcode.
		sort.Slice(all, func(i, j int) bool {
			ki, kj := reports.CallNumberKey(all[i].call), reports.CallNumberKey(all[j].call)
			if ki != kj {
				return ki < kj
			}
			return all[i].barcode < all[j].barcode
		})
		for i := 1; i+5 < len(all) && s.items == nil; i++ {
			w := all[i : i+5]
			key := reports.CallNumberKey
			ok := key(all[i-1].call) != key(w[0].call) && !strings.HasPrefix(key(all[i+5].call), key(w[4].call))
			for _, x := range w {
				ok = ok && x.status == "available"
			}
			if ok {
				for _, x := range w {
					s.items = append(s.items, x.barcode)
				}
				s.from, s.to = w[0].call, w[4].call
			}
		}
		if err := tx.QueryRow(`SELECT barcode FROM items WHERE home_branch_id = 2 AND status = 'available' LIMIT 1`).Scan(&s.other); err != nil {
			return err
		}
		return tx.QueryRow(`SELECT barcode FROM items WHERE status = 'on_loan' LIMIT 1`).Scan(&s.onLoan)
	})
	if err != nil || len(s.items) != 5 {
		t.Fatalf("no shelf of five: %v %v", s.items, err)
	}
	return s
}

// TestStocktake: a shelf of five with one missing, one misplaced, one on loan and
// one unknown barcode; the items seen get a last-seen time; checking the loaned
// item in from the results takes it off the list.
func TestStocktake(t *testing.T) {
	d := mustSmallDemo(t)
	ctx := context.Background()
	sh := findShelf(t, d)
	actor := stacks.Actor{Name: "desk", BranchID: 1}
	var id int64
	if err := d.Write(ctx, func(tx *db.Tx) (err error) {
		id, err = reports.StartStocktake(tx, actor, reports.StocktakeInput{BranchID: 1, From: sh.from, To: sh.to})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	scans := append(append([]string{}, sh.items[:4]...), sh.other, sh.onLoan, "NOSUCH1", sh.items[0])
	want := []string{reports.ScanOnShelf, reports.ScanOnShelf, reports.ScanOnShelf, reports.ScanOnShelf,
		reports.ScanWrongShelf, reports.ScanOnLoan, reports.ScanUnknown, reports.ScanOnShelf}
	for i, b := range scans {
		var sc reports.StocktakeScan
		if err := d.Write(ctx, func(tx *db.Tx) (err error) { sc, err = reports.Scan(tx, id, b); return err }); err != nil {
			t.Fatal(err)
		}
		if sc.Outcome != want[i] {
			t.Errorf("scan %s: %s (%s), want %s", b, sc.Outcome, sc.Message(), want[i])
		}
	}
	results := func() reports.StocktakeResult {
		var r reports.StocktakeResult
		if err := d.Read(ctx, func(tx *db.Tx) (err error) { r, err = reports.Results(tx, id); return err }); err != nil {
			t.Fatal(err)
		}
		return r
	}
	r := results()
	if r.Expected != 5 || r.OnShelf != 4 || len(r.Missing) != 1 || r.Missing[0].Barcode != sh.items[4] {
		t.Errorf("expected %d, on shelf %d, missing %+v; want 5, 4, %s", r.Expected, r.OnShelf, r.Missing, sh.items[4])
	}
	if len(r.Wrong) != 1 || r.Wrong[0].Barcode != sh.other || len(r.OnLoan) != 1 || len(r.Unknown) != 1 || len(r.Scans) != 8 {
		t.Errorf("wrong %v, on loan %v, unknown %v, %d scans", r.Wrong, r.OnLoan, r.Unknown, len(r.Scans))
	}
	if !r.Missing[0].LastSeen.IsZero() {
		t.Errorf("the missing item was seen at %v", r.Missing[0].LastSeen)
	}
	var seen db.NullTime
	if err := d.Read(ctx, func(tx *db.Tx) error {
		return tx.QueryRow(`SELECT last_seen_at FROM items WHERE barcode = ?`, sh.items[0]).Scan(&seen)
	}); err != nil || !seen.Valid || !seen.Time.Equal(demoNow) {
		t.Errorf("last seen of a scanned item: %v %v", seen, err)
	}
	svc := circulation.NewService(d, library.NewPreferenceCache(false))
	if _, err := svc.Checkin(ctx, circulation.CheckinRequest{Actor: actor, Barcode: sh.onLoan}); err != nil {
		t.Fatal(err)
	}
	if r := results(); len(r.OnLoan) != 0 {
		t.Errorf("after the checkin, still on loan: %v", r.OnLoan)
	}
	t.Run("BadInput", func(t *testing.T) {
		for _, in := range []reports.StocktakeInput{{From: "A"}, {BranchID: 1}, {BranchID: 1, From: "B", To: "A"}, {BranchID: 99, From: "A"}} {
			err := d.Write(ctx, func(tx *db.Tx) error { _, err := reports.StartStocktake(tx, actor, in); return err })
			if stacks.ErrorCode(err) != stacks.EINVALID || stacks.ErrorField(err) == "" {
				t.Errorf("%+v: %v", in, err)
			}
		}
	})
}
