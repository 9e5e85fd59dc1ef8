package circulation_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/circulation"
	"github.com/stacks-ils/stacks/db"
)

func TestCheckin(t *testing.T) {
	t.Run("OnTime", func(t *testing.T) {
		e := newEnv(t)
		loan := e.mustCheckout("P0001", "I00001").Loan
		e.clock.Set(at("2026-12-10 15:00"))
		r := e.mustCheckin("I00001")
		if !r.WasOnLoan || r.Overdue || r.FineCents != 0 || r.Hold != nil || r.TransferTo != nil || r.FoundLost || r.Withdrawn {
			t.Errorf("result %+v", r)
		}
		if r.PatronName != "Alex Reader" || r.PatronCard != "P0001" || r.PatronID != e.patronID("P0001") ||
			r.Title != "Pride and Prejudice" || r.Barcode != "I00001" || !r.DueAt.Equal(loan.DueAt) || !r.At.Equal(at("2026-12-10 15:00")) || r.ID == 0 {
			t.Errorf("result %+v", r)
		}
		if got := e.queryString(`SELECT returned_at || ' ' || return_branch_id FROM loans WHERE id = ?`, loan.ID); got != "2026-12-10T15:00:00Z 1" {
			t.Errorf("loan returned %q", got)
		}
		if got := e.queryString(`SELECT status || ' ' || current_branch_id || ' ' || coalesce(CAST(transit_to_id AS TEXT), 'none') FROM items WHERE barcode = 'I00001'`); got != "available 1 none" {
			t.Errorf("item %q, want available at Central", got)
		}
		if e.balance("P0001") != 0 {
			t.Errorf("balance %d", e.balance("P0001"))
		}
		if got := e.queryInt(`SELECT loan_id FROM checkins WHERE id = ?`, r.ID); got != loan.ID {
			t.Errorf("checkin row loan %d, want %d", got, loan.ID)
		}
	})

	t.Run("NotOnLoan", func(t *testing.T) {
		e := newEnv(t)
		r := e.mustCheckin("I00001")
		if r.WasOnLoan || r.FineCents != 0 || r.PatronID != 0 || r.Hold != nil || r.TransferTo != nil {
			t.Errorf("result %+v", r)
		}
		if s := e.itemStatus("I00001"); s != "available" {
			t.Errorf("item %s", s)
		}
		if got := e.queryString(`SELECT coalesce(CAST(loan_id AS TEXT), 'none') FROM checkins WHERE id = ?`, r.ID); got != "none" {
			t.Errorf("checkin row loan %q", got)
		}
	})

	t.Run("ErrUnknownBarcode", func(t *testing.T) {
		e := newEnv(t)
		_, err := e.checkinAt(1, "NOSUCH", "")
		wantCode(t, err, stacks.ENOTFOUND)
	})

	t.Run("OtherBranchTransferHome", func(t *testing.T) {
		e := newEnv(t)
		east := e.freeItem("BOOK", 2)
		e.mustCheckout("P0001", east)
		r := e.mustCheckin(east)
		if r.TransferTo == nil || r.TransferTo.ID != 2 || r.TransferTo.Name != "Eastside" {
			t.Fatalf("TransferTo %+v, want Eastside", r.TransferTo)
		}
		if got := e.queryString(`SELECT status || ' ' || current_branch_id || ' ' || transit_to_id FROM items WHERE barcode = ?`, east); got != "in_transit 1 2" {
			t.Errorf("item %q, want in transit from Central to Eastside", got)
		}
		// Arriving home it goes back on the shelf.
		r, err := e.checkinAt(2, east, "")
		if err != nil {
			t.Fatal(err)
		}
		if r.TransferTo != nil || r.WasOnLoan {
			t.Errorf("at home: %+v", r)
		}
		if got := e.queryString(`SELECT status || ' ' || current_branch_id || ' ' || coalesce(CAST(transit_to_id AS TEXT), 'none') FROM items WHERE barcode = ?`, east); got != "available 2 none" {
			t.Errorf("item %q", got)
		}
	})

	t.Run("Withdrawn", func(t *testing.T) {
		e := newEnv(t)
		e.mustCheckout("P0001", "I00002")
		e.exec(`UPDATE items SET status = 'withdrawn' WHERE barcode = 'I00002'`)
		r := e.mustCheckin("I00002")
		if !r.Withdrawn || !r.WasOnLoan {
			t.Errorf("result %+v", r)
		}
		if s := e.itemStatus("I00002"); s != "withdrawn" {
			t.Errorf("item %s", s)
		}
	})

	t.Run("FoundLost", func(t *testing.T) {
		e := newEnv(t)
		e.exec(`UPDATE items SET status = 'lost' WHERE barcode = 'I00003'`)
		r := e.mustCheckin("I00003")
		if !r.FoundLost {
			t.Errorf("result %+v", r)
		}
		if s := e.itemStatus("I00003"); s != "available" {
			t.Errorf("item %s", s)
		}
	})
}

func TestCheckinOverdue(t *testing.T) {
	// Every loan is issued Monday 30 November 10:00, due Monday 21 December 20:00.
	tests := []struct {
		name     string
		grace    int
		returned time.Time
		fine     int64
		late     string
	}{
		{"SameDayAfterClosing", 0, at("2026-12-21 21:00"), 0, ""},
		{"OneDay", 0, at("2026-12-22 09:00"), 25, "1 open day late"},
		{"ThreeDays", 0, at("2026-12-24 19:00"), 75, "3 open days late"},
		// 22, 23, 24, 28, 29, 30: Christmas, Boxing Day and Sunday 27th are free.
		{"OverChristmas", 0, at("2026-12-30 10:00"), 150, "6 open days late"},
		// 31 December, 2 January, 4 January: New Year's Day and Sunday are free.
		{"OverNewYear", 0, at("2027-01-04 10:00"), 225, "9 open days late"},
		{"Capped", 0, at("2027-02-15 10:00"), 500, "open days late"},
		{"WithinGrace", 3, at("2026-12-24 10:00"), 0, ""},
		{"BeyondGraceChargesEveryDay", 3, at("2026-12-28 10:00"), 100, "4 open days late"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			if tt.grace > 0 {
				e.exec(`UPDATE circ_rules SET grace_periods = ? WHERE item_type_id = 1 AND patron_category_id IS NULL`, tt.grace)
			}
			loan := e.mustCheckout("P0001", "I00001").Loan
			e.clock.Set(tt.returned)
			r := e.mustCheckin("I00001")
			if !r.Overdue {
				t.Error("not overdue")
			}
			if r.FineCents != tt.fine {
				t.Errorf("fine %d, want %d", r.FineCents, tt.fine)
			}
			if e.balance("P0001") != tt.fine {
				t.Errorf("balance %d, want %d", e.balance("P0001"), tt.fine)
			}
			n := e.queryInt(`SELECT count(*) FROM ledger WHERE patron_id = ? AND kind = 'overdue' AND loan_id = ?`, e.patronID("P0001"), loan.ID)
			if tt.fine == 0 && n != 0 {
				t.Errorf("%d ledger rows for no fine", n)
			}
			if tt.fine > 0 {
				if n != 1 {
					t.Fatalf("%d overdue ledger rows for the loan, want 1", n)
				}
				desc := e.queryString(`SELECT description FROM ledger WHERE loan_id = ? AND kind = 'overdue'`, loan.ID)
				wantContains(t, desc, "Pride and Prejudice", "I00001", tt.late)
				if got := e.queryInt(`SELECT fine_cents FROM checkins WHERE id = ?`, r.ID); got != tt.fine {
					t.Errorf("checkin row fine %d", got)
				}
			}
		})
	}

	t.Run("HourlyLoan", func(t *testing.T) {
		e := newEnv(t)
		e.exec(`INSERT INTO item_types (id, code, name) VALUES (4, 'LAPTOP', 'Laptop')`)
		e.exec(`INSERT INTO circ_rules (item_type_id, loan_period, loan_unit, max_loans, renewals, fine_cents, fine_cap_cents)
			VALUES (4, 4, 'hours', 1, 0, 100, 0)`)
		e.exec(`INSERT INTO items (barcode, record_id, home_branch_id, current_branch_id, item_type_id, status, created_at, updated_at)
			VALUES ('L001', 1, 1, 1, 4, 'available', '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z')`)
		loan := e.mustCheckout("P0001", "L001").Loan
		if want := at("2026-11-30 14:00"); !loan.DueAt.Equal(want) {
			t.Errorf("due %s, want %s", loan.DueAt, want)
		}
		// 2.5 hours late: 3 started hours at 1.00.
		e.clock.Set(at("2026-11-30 16:30"))
		r := e.mustCheckin("L001")
		if r.FineCents != 300 {
			t.Errorf("fine %d, want 300", r.FineCents)
		}
		wantContains(t, e.queryString(`SELECT description FROM ledger WHERE loan_id = ?`, loan.ID), "3 hours late")
	})

	t.Run("HourlyLoanClampedAtClosing", func(t *testing.T) {
		e := newEnv(t)
		e.exec(`INSERT INTO item_types (id, code, name) VALUES (4, 'LAPTOP', 'Laptop')`)
		e.exec(`INSERT INTO circ_rules (item_type_id, loan_period, loan_unit, max_loans, renewals, fine_cents, fine_cap_cents)
			VALUES (4, 4, 'hours', 1, 0, 100, 0)`)
		e.exec(`INSERT INTO items (barcode, record_id, home_branch_id, current_branch_id, item_type_id, status, created_at, updated_at)
			VALUES ('L001', 1, 1, 1, 4, 'available', '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z')`)
		e.clock.Set(at("2026-11-30 18:00"))
		loan := e.mustCheckout("P0001", "L001").Loan
		if want := at("2026-11-30 20:00"); !loan.DueAt.Equal(want) {
			t.Errorf("due %s, want closing %s", loan.DueAt, want)
		}
	})

	t.Run("PreviousBorrowerFromAnotherBranch", func(t *testing.T) {
		// The fine follows the calendar of the branch that lent the item.
		e := newEnv(t)
		east := e.freeItem("BOOK", 2)
		_, err := e.svc.Checkout(context.Background(), circulation.CheckoutRequest{Actor: e.actorAt(2), PatronID: e.patronID("P0001"), Barcode: east})
		if err != nil {
			t.Fatal(err)
		}
		e.clock.Set(at("2026-12-22 10:00"))
		r := e.mustCheckin(east)
		if r.FineCents != 25 {
			t.Errorf("fine %d, want 25", r.FineCents)
		}
	})
}

func TestCheckinHolds(t *testing.T) {
	// lent puts I00010 on loan to P0001, as in the desk scenario.
	lent := func(t *testing.T) *env {
		e := newEnv(t)
		e.mustCheckout("P0001", "I00010")
		return e
	}

	t.Run("PickupHere", func(t *testing.T) {
		e := lent(t)
		hold := e.addHold("P0003", "I00010", 1, false)
		e.clock.Set(at("2026-12-02 11:00"))
		r := e.mustCheckin("I00010")
		if r.Hold == nil {
			t.Fatal("no hold found")
		}
		h := r.Hold
		if h.HoldID != hold || h.PatronName != "Casey Waiting" || h.PatronCard != "P0003" || h.PickupBranchName != "Central" ||
			h.PickupBranchCode != "CEN" || h.InTransit || h.Status != "waiting" {
			t.Errorf("hold %+v", h)
		}
		// Seven open days after Wednesday 2 December (Sunday 6th closed): 3, 4, 5, 7,
		// 8, 9 and Thursday 10th, at closing.
		if want := at("2026-12-10 20:00"); !h.PickupBy.Equal(want) {
			t.Errorf("pickup by %s, want %s", h.PickupBy, want)
		}
		if got := e.queryString(`SELECT status || ' ' || priority || ' ' || trapped_item_id || ' ' || waiting_since || ' ' || pickup_by FROM holds WHERE id = ?`, hold); got !=
			fmt.Sprintf("waiting 0 %d 2026-12-02T11:00:00Z 2026-12-10T20:00:00Z", e.itemID("I00010")) {
			t.Errorf("hold row %q", got)
		}
		if got := e.queryString(`SELECT status || ' ' || current_branch_id FROM items WHERE barcode = 'I00010'`); got != "on_hold_shelf 1" {
			t.Errorf("item %q", got)
		}
		if r.TransferTo != nil {
			t.Errorf("transfer %+v for a hold here", r.TransferTo)
		}
		if e.auditCount("hold.trap") != 1 {
			t.Error("no hold.trap audit entry")
		}

		t.Run("RescanChangesNothing", func(t *testing.T) {
			e.clock.Set(at("2026-12-03 11:00"))
			r := e.mustCheckin("I00010")
			if r.Hold == nil || r.Hold.HoldID != hold || r.WasOnLoan {
				t.Fatalf("rescan: %+v", r)
			}
			if got := e.queryString(`SELECT waiting_since FROM holds WHERE id = ?`, hold); got != "2026-12-02T11:00:00Z" {
				t.Errorf("waiting since moved to %s", got)
			}
			if e.auditCount("hold.trap") != 1 {
				t.Error("a rescan wrote another hold.trap entry")
			}
		})
	})

	t.Run("PickupElsewhere", func(t *testing.T) {
		e := lent(t)
		hold := e.addHold("P0003", "I00010", 3, false)
		r := e.mustCheckin("I00010")
		if r.Hold == nil || !r.Hold.InTransit || r.Hold.PickupBranchName != "Westside" || r.Hold.Status != "in_transit" {
			t.Fatalf("hold %+v", r.Hold)
		}
		if got := e.queryString(`SELECT status || ' ' || priority || ' ' || trapped_item_id FROM holds WHERE id = ?`, hold); got != fmt.Sprintf("in_transit 0 %d", e.itemID("I00010")) {
			t.Errorf("hold row %q", got)
		}
		if got := e.queryString(`SELECT status || ' ' || current_branch_id || ' ' || transit_to_id FROM items WHERE barcode = 'I00010'`); got != "in_transit 1 3" {
			t.Errorf("item %q, want in transit to Westside", got)
		}

		t.Run("ArrivesAtPickup", func(t *testing.T) {
			e.clock.Set(at("2026-12-01 12:00"))
			r, err := e.checkinAt(3, "I00010", "")
			if err != nil {
				t.Fatal(err)
			}
			if r.Hold == nil || r.Hold.HoldID != hold || r.Hold.InTransit || r.Hold.Status != "waiting" {
				t.Fatalf("hold %+v", r.Hold)
			}
			// Westside: 7 open days after Tuesday 1 December. Closed: Wednesday 2nd
			// (the demo's staff training day at Westside) and Sunday 6th; so the 3rd,
			// 4th, 5th, 7th, 8th, 9th and 10th count.
			if want := at("2026-12-10 20:00"); !r.Hold.PickupBy.Equal(want) {
				t.Errorf("pickup by %s, want %s", r.Hold.PickupBy, want)
			}
			if got := e.queryString(`SELECT status || ' ' || current_branch_id || ' ' || coalesce(CAST(transit_to_id AS TEXT), 'none') FROM items WHERE barcode = 'I00010'`); got != "on_hold_shelf 3 none" {
				t.Errorf("item %q", got)
			}
		})
	})

	t.Run("ItemLevelBeatsEarlierRecordLevel", func(t *testing.T) {
		e := lent(t)
		e.addCopy("I00010", "I00010B", 1)
		record := e.addHold("P0003", "I00010", 1, false)
		item := e.addHold("P0002", "I00010", 1, true)
		r := e.mustCheckin("I00010")
		if r.Hold == nil || r.Hold.HoldID != item || r.Hold.PatronCard != "P0002" {
			t.Fatalf("hold %+v, want the item-level hold %d", r.Hold, item)
		}
		if got := e.queryString(`SELECT status || ' ' || priority FROM holds WHERE id = ?`, record); got != "queued 1" {
			t.Errorf("record-level hold %q, want still first in the queue", got)
		}
	})

	t.Run("ItemLevelHoldForAnotherCopySkipped", func(t *testing.T) {
		e := lent(t)
		e.addCopy("I00010", "I00010B", 1)
		e.addHold("P0002", "I00010B", 1, true)
		r := e.mustCheckin("I00010")
		if r.Hold != nil {
			t.Fatalf("trapped for a hold on another copy: %+v", r.Hold)
		}
	})

	t.Run("QueueMovesUp", func(t *testing.T) {
		e := lent(t)
		first := e.addHold("P0003", "I00010", 1, false)
		second := e.addHold("P0002", "I00010", 1, false)
		r := e.mustCheckin("I00010")
		if r.Hold == nil || r.Hold.HoldID != first {
			t.Fatalf("hold %+v", r.Hold)
		}
		if got := e.queryInt(`SELECT priority FROM holds WHERE id = ?`, second); got != 1 {
			t.Errorf("second hold priority %d, want 1", got)
		}
	})

	t.Run("SuspendedSkipped", func(t *testing.T) {
		e := lent(t)
		suspended := e.addHold("P0003", "I00010", 1, false)
		e.exec(`UPDATE holds SET suspended_until = '2026-12-15' WHERE id = ?`, suspended)
		next := e.addHold("P0002", "I00010", 1, false)
		r := e.mustCheckin("I00010")
		if r.Hold == nil || r.Hold.HoldID != next {
			t.Fatalf("hold %+v, want %d (the first hold is suspended)", r.Hold, next)
		}
		if got := e.queryString(`SELECT status FROM holds WHERE id = ?`, suspended); got != "queued" {
			t.Errorf("suspended hold %s", got)
		}
	})

	t.Run("OnlySuspended", func(t *testing.T) {
		e := lent(t)
		suspended := e.addHold("P0003", "I00010", 1, false)
		e.exec(`UPDATE holds SET suspended_until = '2026-12-15' WHERE id = ?`, suspended)
		r := e.mustCheckin("I00010")
		if r.Hold != nil {
			t.Fatalf("trapped for a suspended hold: %+v", r.Hold)
		}
		if s := e.itemStatus("I00010"); s != "available" {
			t.Errorf("item %s", s)
		}
	})

	t.Run("SuspensionOver", func(t *testing.T) {
		e := lent(t)
		hold := e.addHold("P0003", "I00010", 1, false)
		e.exec(`UPDATE holds SET suspended_until = '2026-11-30' WHERE id = ?`, hold)
		if r := e.mustCheckin("I00010"); r.Hold == nil || r.Hold.HoldID != hold {
			t.Fatalf("hold %+v", r.Hold)
		}
	})
}

// TestCheckinDeskScenario is step 8: four items back on the shelf, and I00010
// found for P0003's hold at Central.
func TestCheckinDeskScenario(t *testing.T) {
	e := newEnv(t)
	for i := 6; i <= 10; i++ {
		e.mustCheckout("P0002", fmt.Sprintf("I%05d", i), circulation.BlockFines)
	}
	e.addHold("P0003", "I00010", 1, false)
	const batch = "desk-session-1"
	for i := 6; i <= 10; i++ {
		r, err := e.checkinAt(1, fmt.Sprintf("I%05d", i), batch)
		if err != nil {
			t.Fatal(err)
		}
		if (r.Hold != nil) != (i == 10) {
			t.Errorf("I%05d hold %+v", i, r.Hold)
		}
	}
	if _, err := e.checkinAt(1, "I00001", "another-desk"); err != nil {
		t.Fatal(err)
	}

	var list []circulation.CheckinResult
	read := func(limit int) {
		t.Helper()
		err := e.d.Read(context.Background(), func(tx *db.Tx) error {
			var err error
			list, err = circulation.CheckinBatch(tx, batch, limit)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	read(50)
	var got []string
	for _, c := range list {
		got = append(got, c.Barcode)
	}
	if fmt.Sprint(got) != "[I00010 I00009 I00008 I00007 I00006]" {
		t.Fatalf("batch %v, want this batch newest first", got)
	}
	top := list[0]
	if top.Hold == nil || top.Hold.PatronName != "Casey Waiting" || top.Hold.PickupBranchName != "Central" || top.Hold.InTransit {
		t.Errorf("I00010 in the list: hold %+v", top.Hold)
	}
	if top.Title != "The Left Hand of Darkness" || !top.WasOnLoan || top.PatronName != "Blake Owing" || top.PatronCard != "P0002" {
		t.Errorf("I00010 in the list: %+v", top)
	}
	for _, c := range list[1:] {
		if c.Hold != nil || !c.WasOnLoan || c.Overdue || c.FineCents != 0 {
			t.Errorf("%s in the list: %+v", c.Barcode, c)
		}
	}
	read(2)
	if len(list) != 2 || list[0].Barcode != "I00010" {
		t.Errorf("limit 2: %d results", len(list))
	}

	t.Run("BatchShowsTransferAndFine", func(t *testing.T) {
		east := e.freeItem("BOOK", 2)
		e.mustCheckout("P0001", east)
		e.clock.Set(at("2026-12-22 10:00"))
		if _, err := e.checkinAt(1, east, "b2"); err != nil {
			t.Fatal(err)
		}
		err := e.d.Read(context.Background(), func(tx *db.Tx) error {
			var err error
			list, err = circulation.CheckinBatch(tx, "b2", 10)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != 1 {
			t.Fatalf("%d results", len(list))
		}
		c := list[0]
		if c.TransferTo == nil || c.TransferTo.Code != "EAS" || c.TransferTo.Name != "Eastside" || !c.Overdue || c.FineCents != 25 {
			t.Errorf("%+v (transfer %+v)", c, c.TransferTo)
		}
	})

	t.Run("NoBatch", func(t *testing.T) {
		e.mustCheckin("I00002")
		err := e.d.Read(context.Background(), func(tx *db.Tx) error {
			var err error
			list, err = circulation.CheckinBatch(tx, "", 10)
			return err
		})
		if err != nil || len(list) != 0 {
			t.Errorf("the empty batch lists %d (err %v)", len(list), err)
		}
	})
}

// TestCheckinConcurrentHold: two copies of one title come back at two desks at
// once, and one patron is waiting. Exactly one copy is set aside.
func TestCheckinConcurrentHold(t *testing.T) {
	for round := 0; round < 3; round++ {
		t.Run(fmt.Sprintf("Round%d", round), func(t *testing.T) {
			e := newEnv(t)
			e.addCopy("I00010", "I00010B", 1)
			e.mustCheckout("P0001", "I00010")
			e.mustCheckout("P0002", "I00010B", circulation.BlockFines)
			hold := e.addHold("P0003", "I00010", 1, false)

			barcodes := []string{"I00010", "I00010B"}
			results := make([]circulation.CheckinResult, 2)
			errs := make([]error, 2)
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i := range barcodes {
				wg.Add(1)
				go func(i int) {
					defer wg.Done()
					<-start
					results[i], errs[i] = e.svc.Checkin(context.Background(), circulation.CheckinRequest{Actor: e.desk, Barcode: barcodes[i]})
				}(i)
			}
			close(start)
			wg.Wait()
			trapped := 0
			for i, r := range results {
				if errs[i] != nil {
					t.Fatalf("checkin %s: %v", barcodes[i], errs[i])
				}
				if r.Hold != nil {
					trapped++
					if r.Hold.HoldID != hold {
						t.Errorf("%s trapped for hold %d", barcodes[i], r.Hold.HoldID)
					}
				}
			}
			if trapped != 1 {
				t.Errorf("%d copies trapped, want 1", trapped)
			}
			statuses := e.queryStrings(`SELECT status FROM items WHERE barcode IN ('I00010', 'I00010B') ORDER BY status`)
			if fmt.Sprint(statuses) != "[available on_hold_shelf]" {
				t.Errorf("statuses %v, want one on the shelf and one on the hold shelf", statuses)
			}
			if n := e.queryInt(`SELECT count(*) FROM holds WHERE id = ? AND status = 'waiting' AND trapped_item_id IS NOT NULL`, hold); n != 1 {
				t.Error("the hold is not waiting with one copy")
			}
		})
	}
}

func TestPatronLoans(t *testing.T) {
	e := newEnv(t)
	e.mustCheckout("P0001", "I00001")
	e.clock.Set(at("2026-12-01 10:00"))
	e.mustCheckout("P0001", "I00002")
	e.clock.Set(at("2026-11-30 12:00"))
	e.mustCheckout("P0001", "I00003")
	var loans []circulation.Loan
	err := e.d.Read(context.Background(), func(tx *db.Tx) error {
		var err error
		loans, err = circulation.PatronLoans(tx, e.patronID("P0001"))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range loans {
		got = append(got, l.Barcode+" "+l.DueAt.Format("01-02"))
	}
	if fmt.Sprint(got) != "[I00001 12-21 I00003 12-21 I00002 12-22]" {
		t.Errorf("loans %v, want soonest due first", got)
	}
}
