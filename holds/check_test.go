package holds_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/dbtest"
	"github.com/stacks-ils/stacks/holds"
)

func holdsCheck(tb testing.TB, d *db.DB) []stacks.Violation {
	tb.Helper()
	var vs []stacks.Violation
	err := d.Read(context.Background(), func(tx *db.Tx) (err error) {
		vs, err = holds.Check(tx)
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
	return vs
}

func TestCheckInvariants(t *testing.T) {
	for _, tc := range []struct {
		name string
		// setup adds consistent holds; stmts then break them. $1, $2... in stmts
		// are replaced by the ids of the holds setup added.
		setup   []hold
		stmts   []string
		check   string
		details []string
	}{
		{"OKQueueAndShelf", []hold{{card: "P0001"}, {card: "P0002"}, {card: "P0003", status: "waiting", trapped: "I00001"}},
			[]string{`UPDATE items SET status = 'on_hold_shelf' WHERE barcode = 'I00001'`}, "", nil},
		{"OKInTransit", []hold{{card: "P0003", status: "in_transit", trapped: "I00001B", pickup: 1}},
			[]string{`UPDATE items SET status = 'in_transit', transit_to_id = 1 WHERE barcode = 'I00001B'`}, "", nil},
		{"ErrQueueGap", []hold{{card: "P0001"}, {card: "P0002"}, {card: "P0003"}},
			[]string{`UPDATE holds SET priority = 4 WHERE id = $3`}, "hold-queue-numbering", []string{"3 queued holds with the positions 1, 2, 4"}},
		{"ErrQueueTwiceFirst", []hold{{card: "P0001"}, {card: "P0002"}},
			[]string{`UPDATE holds SET priority = 1 WHERE id = $2`}, "hold-queue-numbering", []string{"positions 1, 1", "numbered 1 to 2"}},
		{"ErrQueueFromZero", []hold{{card: "P0001"}},
			[]string{`UPDATE holds SET priority = 0 WHERE id = $1`}, "hold-queue-numbering", []string{"positions 0"}},
		{"ErrTrappedWithPriority", []hold{{card: "P0001"}, {card: "P0003", status: "waiting", trapped: "I00001"}},
			[]string{`UPDATE items SET status = 'on_hold_shelf' WHERE barcode = 'I00001'`, `UPDATE holds SET priority = 2 WHERE id = $2`},
			"hold-trapped-priority", []string{"is waiting but has priority 2"}},
		{"ErrWaitingItemOnShelfElsewhere", []hold{{card: "P0003", status: "waiting", trapped: "I00001", pickup: 2}},
			[]string{`UPDATE items SET status = 'on_hold_shelf' WHERE barcode = 'I00001'`},
			"hold-waiting-item", []string{"is waiting at EAS with item I00001", "on_hold_shelf at CEN"}},
		{"ErrWaitingItemAvailable", []hold{{card: "P0003", status: "waiting", trapped: "I00001"}},
			nil, "hold-waiting-item", []string{"the item is available at CEN"}},
		{"ErrInTransitWrongBranch", []hold{{card: "P0003", status: "in_transit", trapped: "I00001B", pickup: 1}},
			[]string{`UPDATE items SET status = 'in_transit', transit_to_id = 3 WHERE barcode = 'I00001B'`},
			"hold-in-transit-item", []string{"is in transit to CEN with item I00001B", "in_transit to WES"}},
		{"ErrInTransitItemOnLoan", []hold{{card: "P0003", status: "in_transit", trapped: "I00001B", pickup: 1}},
			[]string{`UPDATE items SET status = 'on_loan' WHERE barcode = 'I00001B'`},
			"hold-in-transit-item", []string{"but the item is on_loan"}},
		{"ErrTrappedCopyOfOtherTitle", []hold{{card: "P0003", status: "waiting", trapped: "I00002"}},
			[]string{`UPDATE items SET status = 'on_hold_shelf' WHERE barcode = 'I00002'`},
			"hold-trapped-item", []string{"is waiting with item I00002"}},
		{"ErrTrappedOtherCopyThanAsked", []hold{{card: "P0003", status: "waiting", itemLevel: "I00001B", trapped: "I00001"}},
			[]string{`UPDATE items SET status = 'on_hold_shelf' WHERE barcode = 'I00001'`},
			"hold-trapped-item", []string{"but is waiting with item I00001 "}},
		{"ErrTrappedNoCopy", []hold{{card: "P0003", status: "in_transit", pickup: 1}},
			nil, "hold-trapped-item", []string{"names no trapped copy"}},
		{"ErrShelfWithoutHold", nil,
			[]string{`UPDATE items SET status = 'on_hold_shelf' WHERE barcode = 'I00005'`},
			"item-on-hold-shelf-without-hold", []string{"item I00005 (id"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := mustOpenDB(t)
			if vs := holdsCheck(t, d); len(vs) != 0 {
				t.Fatalf("the demo library has violations before the test breaks it: %v", vs)
			}
			ids := addHolds(t, d, tc.setup...)
			var stmts []string
			for _, s := range tc.stmts {
				for i := len(ids) - 1; i >= 0; i-- {
					s = strings.ReplaceAll(s, "$"+strconv.Itoa(i+1), strconv.FormatInt(ids[i], 10))
				}
				stmts = append(stmts, s)
			}
			dbtest.Corrupt(t, d, stmts...)
			vs := holdsCheck(t, d)
			if tc.check == "" {
				if len(vs) != 0 {
					t.Fatalf("consistent holds reported: %v", vs)
				}
				return
			}
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
