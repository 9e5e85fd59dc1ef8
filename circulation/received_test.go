package circulation_test

import (
	"context"
	"testing"

	"github.com/stacks-ils/stacks/circulation"
	"github.com/stacks-ils/stacks/db"
)

// batchRow is the desk list's row of a checkin, as CheckinBatch reads it back.
func (e *env) batchRow(batch string, id int64) circulation.CheckinResult {
	e.tb.Helper()
	var rows []circulation.CheckinResult
	err := e.d.Read(context.Background(), func(tx *db.Tx) (err error) {
		rows, err = circulation.CheckinBatch(tx, batch, 10)
		return err
	})
	if err != nil {
		e.tb.Fatal(err)
	}
	for _, r := range rows {
		if r.ID == id {
			return r
		}
	}
	e.tb.Fatalf("checkin %d is not in batch %q", id, batch)
	return circulation.CheckinResult{}
}

// receivedFrom names a checkin's ReceivedFrom, "" for none.
func receivedFrom(r circulation.CheckinResult) string {
	if r.ReceivedFrom == nil {
		return ""
	}
	return r.ReceivedFrom.Name
}

// TestCheckinReceived: checking in an item in transit at the branch it travels
// to receives it from the branch that sent it, which the checkin and the desk's
// list name; anywhere else, and for an item that was not travelling, it names
// none.
func TestCheckinReceived(t *testing.T) {
	t.Run("Transfer", func(t *testing.T) {
		e := newEnv(t)
		east := e.freeItem("BOOK", eastside)
		e.mustCheckout("P0001", east)
		if res := e.mustCheckinAt(westside, east); res.TransferTo == nil || res.TransferTo.ID != eastside || res.ReceivedFrom != nil {
			t.Fatalf("returned at Westside: %+v", res)
		}
		res, err := e.checkinAt(eastside, east, "desk-1")
		if err != nil {
			t.Fatal(err)
		}
		if res.WasOnLoan || res.TransferTo != nil || res.Hold != nil || receivedFrom(res) != "Westside" || res.ReceivedFrom.ID != westside || res.ReceivedFrom.Code != "WES" {
			t.Fatalf("received at Eastside: %+v, want received from Westside", res)
		}
		if got := e.queryString(`SELECT status || ' ' || current_branch_id || ' ' || coalesce(CAST(transit_to_id AS TEXT), 'none') FROM items WHERE barcode = ?`, east); got != "available 2 none" {
			t.Errorf("item %q, want available at Eastside, travelling nowhere", got)
		}
		if got := e.queryInt(`SELECT coalesce(received_from_id, 0) FROM checkins WHERE id = ?`, res.ID); got != westside {
			t.Errorf("checkin's received_from_id %d, want Westside (%d)", got, westside)
		}
		if row := e.batchRow("desk-1", res.ID); receivedFrom(row) != "Westside" || row.ReceivedFrom.Code != "WES" {
			t.Errorf("the desk's list: %+v, want received from Westside", row)
		}
		e.wantNone(eastside)
		e.wantNone(westside)

		// Checked in again: now it is only a return of an item on the shelf.
		if again := e.mustCheckinAt(eastside, east); again.ReceivedFrom != nil {
			t.Errorf("checked in again: received from %q", receivedFrom(again))
		}
	})

	t.Run("HoldTransit", func(t *testing.T) {
		e := newEnv(t)
		e.mustCheckout("P0001", "I00010")
		hold := e.addHold("P0003", "I00010", westside, false)
		if res := e.mustCheckinAt(central, "I00010"); res.Hold == nil || !res.Hold.InTransit {
			t.Fatalf("no hold transit: %+v", res)
		}
		res := e.mustCheckinAt(westside, "I00010")
		if receivedFrom(res) != "Central" || res.Hold == nil || res.Hold.InTransit {
			t.Fatalf("at the pickup branch: %+v, want received from Central and the hold on the shelf", res)
		}
		if got := e.queryString(`SELECT status FROM holds WHERE id = ?`, hold); got != "waiting" {
			t.Errorf("hold %s, want waiting", got)
		}
	})

	t.Run("NotHere", func(t *testing.T) {
		e := newEnv(t)
		east := e.freeItem("BOOK", eastside)
		e.mustCheckout("P0001", east)
		e.mustCheckinAt(westside, east)
		// Checked in at Central on its way to Eastside: not received there.
		res := e.mustCheckinAt(central, east)
		if res.ReceivedFrom != nil || res.TransferTo == nil || res.TransferTo.ID != eastside {
			t.Errorf("at Central: %+v, want a transfer on to Eastside, nothing received", res)
		}
	})

	t.Run("Return", func(t *testing.T) {
		e := newEnv(t)
		e.mustCheckout("P0001", "I00001")
		if res := e.mustCheckin("I00001"); !res.WasOnLoan || res.ReceivedFrom != nil {
			t.Errorf("a return at home: %+v", res)
		}
	})
}
