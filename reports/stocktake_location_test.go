package reports_test

import (
	"context"
	"testing"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/circulation"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/library"
	"github.com/stacks-ils/stacks/reports"
)

// TestStocktakeByLocation: a stocktake of Central's Reference shelves. Every
// available Reference item but one is scanned (that one is missing), with a
// Central item from another location and an Eastside Reference item (both on
// the wrong shelf), an item on loan (check it in from there) and an unknown
// barcode; the counts are the location's, not a call number range's.
func TestStocktakeByLocation(t *testing.T) {
	d := mustSmallDemo(t)
	ctx := context.Background()
	var shelf []string
	var otherLocation, otherBranch, onLoan string
	err := d.Read(ctx, func(tx *db.Tx) error {
		rows, err := tx.Query(`SELECT barcode FROM items WHERE home_branch_id = 1 AND location = 'Reference' AND status = 'available'
			ORDER BY call_number, barcode`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var b string
			if err := rows.Scan(&b); err != nil {
				return err
			}
			shelf = append(shelf, b)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		for q, dst := range map[string]*string{
			`SELECT barcode FROM items WHERE home_branch_id = 1 AND location = 'Adult fiction' AND status = 'available' LIMIT 1`: &otherLocation,
			`SELECT barcode FROM items WHERE home_branch_id = 2 AND location = 'Reference' AND status = 'available' LIMIT 1`:     &otherBranch,
			`SELECT barcode FROM items WHERE home_branch_id = 1 AND status = 'on_loan' LIMIT 1`:                                  &onLoan,
		} {
			if err := tx.QueryRow(q).Scan(dst); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil || len(shelf) < 3 {
		t.Fatalf("Central's Reference shelf: %v %v", shelf, err)
	}
	actor := stacks.Actor{Name: "desk", BranchID: 1}
	var id int64
	if err := d.Write(ctx, func(tx *db.Tx) (err error) {
		id, err = reports.StartStocktake(tx, actor, reports.StocktakeInput{BranchID: 1, Location: " Reference "})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	missing := shelf[len(shelf)-1]
	type scan struct{ barcode, want string }
	var scans []scan
	for _, b := range shelf[:len(shelf)-1] {
		scans = append(scans, scan{b, reports.ScanOnShelf})
	}
	scans = append(scans, scan{otherLocation, reports.ScanWrongShelf}, scan{otherBranch, reports.ScanWrongShelf},
		scan{onLoan, reports.ScanOnLoan}, scan{"NOSUCH1", reports.ScanUnknown})
	for _, s := range scans {
		var sc reports.StocktakeScan
		if err := d.Write(ctx, func(tx *db.Tx) (err error) { sc, err = reports.Scan(tx, id, s.barcode); return err }); err != nil {
			t.Fatal(err)
		}
		if sc.Outcome != s.want {
			t.Errorf("scan %s: %s (%s), want %s", s.barcode, sc.Outcome, sc.Message(), s.want)
		}
		if s.barcode == otherLocation && sc.Message() != "Wrong shelf: belongs at Central, Adult fiction, "+sc.CallNumber {
			t.Errorf("misplaced item's message: %q", sc.Message())
		}
	}
	results := func() reports.StocktakeResult {
		t.Helper()
		var r reports.StocktakeResult
		if err := d.Read(ctx, func(tx *db.Tx) (err error) { r, err = reports.Results(tx, id); return err }); err != nil {
			t.Fatal(err)
		}
		return r
	}
	r := results()
	if !r.ByLocation() || r.Range() != "Reference at Central" {
		t.Errorf("stocktake %+v: want Reference at Central", r.Stocktake)
	}
	if r.Expected != len(shelf) || r.OnShelf != len(shelf)-1 || len(r.Missing) != 1 || r.Missing[0].Barcode != missing {
		t.Errorf("expected %d, on shelf %d, missing %+v; want %d, %d, %s", r.Expected, r.OnShelf, r.Missing, len(shelf), len(shelf)-1, missing)
	}
	wrong := map[string]bool{}
	for _, w := range r.Wrong {
		wrong[w.Barcode] = true
	}
	if len(r.Wrong) != 2 || !wrong[otherLocation] || !wrong[otherBranch] || len(r.OnLoan) != 1 || r.OnLoan[0].Barcode != onLoan || len(r.Unknown) != 1 {
		t.Errorf("wrong %v, on loan %v, unknown %v", r.Wrong, r.OnLoan, r.Unknown)
	}
	// Checked in from the results, the loaned item leaves the on-loan list.
	svc := circulation.NewService(d, library.NewPreferenceCache(false))
	if _, err := svc.Checkin(ctx, circulation.CheckinRequest{Actor: actor, Barcode: onLoan}); err != nil {
		t.Fatal(err)
	}
	if r := results(); len(r.OnLoan) != 0 {
		t.Errorf("after the checkin, still on loan: %v", r.OnLoan)
	}

	t.Run("Locations", func(t *testing.T) {
		var got []reports.BranchLocations
		if err := d.Read(ctx, func(tx *db.Tx) (err error) { got, err = reports.StocktakeLocations(tx); return err }); err != nil {
			t.Fatal(err)
		}
		if len(got) != 3 || got[0].BranchID != 1 || len(got[0].Locations) != 5 || got[0].Locations[0] != "Adult fiction" || got[0].Locations[4] != "Reference" {
			t.Errorf("locations in use: %+v", got)
		}
	})
	t.Run("BadInput", func(t *testing.T) {
		for _, tc := range []struct {
			in    reports.StocktakeInput
			field string
		}{
			{reports.StocktakeInput{BranchID: 1, Location: "Basement"}, "location"},
			{reports.StocktakeInput{BranchID: 1, Location: "Reference", From: "A"}, "location"},
			{reports.StocktakeInput{BranchID: 99, Location: "Reference"}, "branch"},
			{reports.StocktakeInput{Location: "Reference"}, "branch"},
		} {
			err := d.Write(ctx, func(tx *db.Tx) error { _, err := reports.StartStocktake(tx, actor, tc.in); return err })
			if stacks.ErrorCode(err) != stacks.EINVALID || stacks.ErrorField(err) != tc.field {
				t.Errorf("%+v: %v, want a message at %s", tc.in, err, tc.field)
			}
		}
	})
}
