package circulation_test

import (
	"context"
	"testing"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/catalog"
	"github.com/stacks-ils/stacks/circulation"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/dbtest"
)

// Branches of the demo library.
const (
	central  = 1
	eastside = 2
	westside = 3
)

// transfers lists the transfers of a branch.
func (e *env) transfers(branchID int64) circulation.BranchTransfers {
	e.tb.Helper()
	var out circulation.BranchTransfers
	err := e.d.Read(context.Background(), func(tx *db.Tx) (err error) {
		out, err = circulation.ListTransfers(tx, branchID)
		return err
	})
	if err != nil {
		e.tb.Fatalf("transfers of branch %d: %v", branchID, err)
	}
	return out
}

// findTransfer reads the transfer of a checkin.
func (e *env) findTransfer(checkinID int64) (circulation.Transfer, error) {
	var t circulation.Transfer
	err := e.d.Read(context.Background(), func(tx *db.Tx) (err error) {
		t, err = circulation.FindTransfer(tx, checkinID)
		return err
	})
	return t, err
}

func (e *env) mustCheckinAt(branchID int64, barcode string) circulation.CheckinResult {
	e.tb.Helper()
	res, err := e.checkinAt(branchID, barcode, "")
	if err != nil {
		e.tb.Fatalf("checkin %s at branch %d: %v", barcode, branchID, err)
	}
	return res
}

// barcodes lists the barcodes of transfers, in order.
func barcodes(ts []circulation.Transfer) []string {
	out := []string{}
	for _, t := range ts {
		out = append(out, t.Barcode)
	}
	return out
}

// wantOnly checks that ts is exactly one transfer, of barcode, and returns it.
func wantOnly(tb testing.TB, what string, ts []circulation.Transfer, barcode string) circulation.Transfer {
	tb.Helper()
	if len(ts) != 1 || ts[0].Barcode != barcode {
		tb.Fatalf("%s: %v, want only %s", what, barcodes(ts), barcode)
	}
	return ts[0]
}

// wantNone checks that a branch has no transfers either way.
func (e *env) wantNone(branchID int64) {
	e.tb.Helper()
	if got := e.transfers(branchID); len(got.Incoming)+len(got.Outgoing) != 0 {
		e.tb.Errorf("branch %d: incoming %v, outgoing %v, want none", branchID, barcodes(got.Incoming), barcodes(got.Outgoing))
	}
}

func TestListTransfers(t *testing.T) {
	t.Run("Empty", func(t *testing.T) {
		e := newEnv(t)
		for _, b := range []int64{central, eastside, westside} {
			e.wantNone(b)
		}
	})

	t.Run("ReturningHome", func(t *testing.T) {
		e := newEnv(t)
		east := e.freeItem("BOOK", eastside)
		e.mustCheckout("P0001", east)
		e.clock.Set(at("2026-12-01 15:30"))
		res := e.mustCheckinAt(central, east)
		if res.TransferTo == nil {
			t.Fatalf("no transfer: %+v", res)
		}

		out := wantOnly(t, "sent from Central", e.transfers(central).Outgoing, east)
		if len(e.transfers(central).Incoming) != 0 {
			t.Error("Central lists its own outgoing item as coming to it")
		}
		in := wantOnly(t, "coming to Eastside", e.transfers(eastside).Incoming, east)
		if out != in {
			t.Errorf("the two lists disagree:\n%+v\n%+v", out, in)
		}
		e.wantNone(westside)

		if out.CheckinID != res.ID || out.ItemID != e.itemID(east) || out.RecordID != e.recordID(east) || out.Title == "" ||
			out.From.Name != "Central" || out.From.Code != "CEN" || out.To.Name != "Eastside" || out.To.ID != eastside ||
			!out.Home || out.Hold != nil || !out.SentAt.Equal(at("2026-12-01 15:30")) {
			t.Errorf("transfer %+v", out)
		}
		if got := e.queryString(`SELECT call_number FROM items WHERE barcode = ?`, east); out.CallNumber != got {
			t.Errorf("call number %q, want %q", out.CallNumber, got)
		}
		if out.Reason() != "Returning home" {
			t.Errorf("reason %q", out.Reason())
		}

		t.Run("ArrivesHome", func(t *testing.T) {
			res := e.mustCheckinAt(eastside, east)
			if res.TransferTo != nil || res.Hold != nil {
				t.Fatalf("at home: %+v", res)
			}
			if got := e.queryString(`SELECT status || ' ' || current_branch_id || ' ' || coalesce(CAST(transit_to_id AS TEXT), 'none') FROM items WHERE barcode = ?`, east); got != "available 2 none" {
				t.Errorf("item %q, want available at Eastside", got)
			}
			e.wantNone(central)
			e.wantNone(eastside)
		})
	})

	t.Run("HoldTransit", func(t *testing.T) {
		e := newEnv(t)
		e.mustCheckout("P0001", "I00010")
		hold := e.addHold("P0003", "I00010", westside, false)
		res := e.mustCheckinAt(central, "I00010")
		if res.Hold == nil || !res.Hold.InTransit {
			t.Fatalf("no hold transit: %+v", res)
		}

		out := wantOnly(t, "sent from Central", e.transfers(central).Outgoing, "I00010")
		wantOnly(t, "coming to Westside", e.transfers(westside).Incoming, "I00010")
		e.wantNone(eastside)
		if out.CheckinID != res.ID || out.To.Name != "Westside" || out.From.Name != "Central" || out.Home ||
			out.Hold == nil || out.Hold.HoldID != hold || out.Hold.PatronID != e.patronID("P0003") ||
			out.Hold.PatronName != "Casey Waiting" || out.Hold.PatronCard != "P0003" || !out.SentAt.Equal(dbtest.Monday) {
			t.Errorf("transfer %+v (hold %+v)", out, out.Hold)
		}
		if want := "Hold for Casey Waiting (P0003) – pickup at Westside"; out.Reason() != want {
			t.Errorf("reason %q, want %q", out.Reason(), want)
		}

		t.Run("StatusSaysWhere", func(t *testing.T) {
			err := e.d.Read(context.Background(), func(tx *db.Tx) error {
				it, err := catalog.FindItemByBarcode(tx, "I00010")
				if err != nil {
					return err
				}
				if it.StatusText() != "In transit to Westside" {
					t.Errorf("status %q, want In transit to Westside", it.StatusText())
				}
				_, items, err := catalog.FindRecord(tx, it.RecordID)
				if err != nil {
					return err
				}
				if len(items) != 1 || items[0].TransitToName != "Westside" {
					t.Errorf("record items %+v", items)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})

		t.Run("ArrivesAtPickup", func(t *testing.T) {
			e.clock.Set(at("2026-12-01 12:00"))
			res := e.mustCheckinAt(westside, "I00010")
			if res.Hold == nil || res.Hold.HoldID != hold || res.Hold.InTransit || res.TransferTo != nil {
				t.Fatalf("at the pickup branch: %+v", res)
			}
			if got := e.queryString(`SELECT status || ' ' || current_branch_id || ' ' || coalesce(CAST(transit_to_id AS TEXT), 'none') FROM items WHERE barcode = 'I00010'`); got != "on_hold_shelf 3 none" {
				t.Errorf("item %q, want on the hold shelf at Westside", got)
			}
			if got := e.queryString(`SELECT status FROM holds WHERE id = ?`, hold); got != "waiting" {
				t.Errorf("hold %s, want waiting", got)
			}
			e.wantNone(central)
			e.wantNone(westside)
		})
	})

	t.Run("CancelledHoldGoesHome", func(t *testing.T) {
		// An Eastside copy returned at Central for a hold at Westside, the hold then
		// cancelled on the way: the copy goes home instead, with no checkin to
		// print a slip from, but it left Central when it was checked in.
		e := newEnv(t)
		east := e.freeItem("BOOK", eastside)
		hold := e.addHold("P0003", east, westside, true)
		e.clock.Set(at("2026-12-01 09:15"))
		res := e.mustCheckinAt(central, east)
		if res.Hold == nil || !res.Hold.InTransit {
			t.Fatalf("no hold transit: %+v", res)
		}
		e.clock.Set(at("2026-12-01 11:00"))
		if _, err := e.svc.CancelHold(context.Background(), e.desk, hold, "patron moved"); err != nil {
			t.Fatal(err)
		}
		e.wantNone(westside)
		out := wantOnly(t, "sent from Central", e.transfers(central).Outgoing, east)
		wantOnly(t, "coming to Eastside", e.transfers(eastside).Incoming, east)
		if out.CheckinID != 0 || out.Hold != nil || !out.Home || out.To.Name != "Eastside" || !out.SentAt.Equal(at("2026-12-01 09:15")) {
			t.Errorf("transfer %+v", out)
		}
	})

	t.Run("NoCheckin", func(t *testing.T) {
		// Sent by no checkin (a hold expired on another branch's shelf): the last
		// change of the item is when it left.
		e := newEnv(t)
		east := e.freeItem("BOOK", eastside)
		e.exec(`UPDATE items SET status = 'in_transit', current_branch_id = ?, transit_to_id = ?, updated_at = '2026-11-29T08:00:00Z' WHERE barcode = ?`,
			westside, eastside, east)
		out := wantOnly(t, "sent from Westside", e.transfers(westside).Outgoing, east)
		if out.CheckinID != 0 || !out.SentAt.Equal(at("2026-11-29 08:00")) || out.From.Name != "Westside" {
			t.Errorf("transfer %+v", out)
		}
	})

	t.Run("Order", func(t *testing.T) {
		e := newEnv(t)
		first := e.freeItem("BOOK", eastside)
		second := e.freeItem("BOOK", westside)
		e.clock.Set(at("2026-12-01 10:00"))
		e.mustCheckinAt(central, second)
		e.clock.Set(at("2026-12-01 09:00"))
		e.mustCheckinAt(central, first)
		got := barcodes(e.transfers(central).Outgoing)
		if len(got) != 2 || got[0] != first || got[1] != second {
			t.Errorf("outgoing %v, want the longest on the way first: %s, %s", got, first, second)
		}
	})
}

func TestFindTransfer(t *testing.T) {
	t.Run("Home", func(t *testing.T) {
		e := newEnv(t)
		east := e.freeItem("BOOK", eastside)
		res := e.mustCheckinAt(central, east)
		tr, err := e.findTransfer(res.ID)
		if err != nil {
			t.Fatal(err)
		}
		if tr.CheckinID != res.ID || tr.Barcode != east || tr.Title != res.Title || tr.CallNumber != res.CallNumber ||
			tr.From.Name != "Central" || tr.To.Name != "Eastside" || tr.To.ID != eastside || !tr.Home || tr.Hold != nil || !tr.SentAt.Equal(dbtest.Monday) {
			t.Errorf("transfer %+v", tr)
		}

		t.Run("AfterArrival", func(t *testing.T) {
			e.clock.Set(dbtest.Monday.Add(24 * time.Hour))
			e.mustCheckinAt(eastside, east)
			again, err := e.findTransfer(res.ID)
			if err != nil {
				t.Fatal(err)
			}
			if again != tr {
				t.Errorf("after arrival %+v, want %+v", again, tr)
			}
		})
	})

	t.Run("Hold", func(t *testing.T) {
		e := newEnv(t)
		e.mustCheckout("P0001", "I00010")
		hold := e.addHold("P0003", "I00010", westside, false)
		res := e.mustCheckinAt(central, "I00010")
		tr, err := e.findTransfer(res.ID)
		if err != nil {
			t.Fatal(err)
		}
		if tr.To.Name != "Westside" || tr.To.Code != "WES" || tr.Home || tr.Hold == nil || tr.Hold.HoldID != hold || tr.Hold.PatronCard != "P0003" {
			t.Errorf("transfer %+v (hold %+v)", tr, tr.Hold)
		}
		if want := "Hold for Casey Waiting (P0003) – pickup at Westside"; tr.Reason() != want {
			t.Errorf("reason %q, want %q", tr.Reason(), want)
		}
	})

	t.Run("ErrNoSuchCheckin", func(t *testing.T) {
		e := newEnv(t)
		_, err := e.findTransfer(987654)
		wantCode(t, err, stacks.ENOTFOUND)
		wantContains(t, stacks.ErrorMessage(err), "no checkin 987654")
	})

	t.Run("ErrNothingSent", func(t *testing.T) {
		e := newEnv(t)
		e.mustCheckout("P0001", "I00001")
		res := e.mustCheckin("I00001")
		_, err := e.findTransfer(res.ID)
		wantCode(t, err, stacks.ENOTFOUND)
		wantContains(t, stacks.ErrorMessage(err), "I00001", "stayed at Central", "no transit slip")
	})

	t.Run("ErrHoldHere", func(t *testing.T) {
		// A hold filled at the branch of the checkin sends nothing anywhere.
		e := newEnv(t)
		e.mustCheckout("P0001", "I00010")
		e.addHold("P0003", "I00010", central, false)
		res := e.mustCheckin("I00010")
		if res.Hold == nil || res.Hold.InTransit {
			t.Fatalf("hold %+v", res.Hold)
		}
		_, err := e.findTransfer(res.ID)
		wantCode(t, err, stacks.ENOTFOUND)
	})
}
