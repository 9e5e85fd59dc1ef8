package circulation_test

import (
	"context"
	"testing"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/circulation"
	"github.com/stacks-ils/stacks/db"
)

// toAcknowledge lists the barcodes of a desk list's checkins still to
// acknowledge, newest first.
func (e *env) toAcknowledge(batch string) []string {
	e.tb.Helper()
	var out []string
	err := e.d.Read(context.Background(), func(tx *db.Tx) error {
		cs, err := circulation.CheckinsToAcknowledge(tx, batch)
		for _, c := range cs {
			if !c.Pending {
				e.tb.Errorf("checkin %d of %s to acknowledge is not Pending", c.ID, c.Barcode)
			}
			out = append(out, c.Barcode)
		}
		return err
	})
	if err != nil {
		e.tb.Fatal(err)
	}
	return out
}

func (e *env) mustCheckinBatch(branchID int64, barcode, batch string) circulation.CheckinResult {
	e.tb.Helper()
	res, err := e.checkinAt(branchID, barcode, batch)
	if err != nil {
		e.tb.Fatalf("checkin %s: %v", barcode, err)
	}
	return res
}

func same(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestAcknowledgeCheckin(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	const batch = "desk-list"
	plain := e.freeItem("BOOK", central)
	east := e.freeItem("BOOK", eastside)
	e.mustCheckout("P0001", plain)
	e.mustCheckout("P0001", "I00010")
	e.addHold("P0003", "I00010", westside, false)

	p := e.mustCheckinBatch(central, plain, batch)
	tr := e.mustCheckinBatch(central, east, batch)
	hold := e.mustCheckinBatch(central, "I00010", batch)
	if p.Pending || !tr.Pending || tr.TransferTo == nil || !hold.Pending || hold.Hold == nil || !hold.Hold.InTransit {
		t.Fatalf("plain %+v\ntransfer %+v\nhold %+v", p, tr, hold)
	}
	if got := e.toAcknowledge(batch); !same(got, []string{"I00010", east}) {
		t.Fatalf("to acknowledge %v, want I00010 then %s", got, east)
	}
	if got := e.queryString(`SELECT CAST(sum(needs_ack) AS TEXT) FROM checkins WHERE batch = ?`, batch); got != "2" {
		t.Errorf("%s checkins marked to acknowledge, want 2", got)
	}
	// A checkin on no desk's list (SIP, a stocktake) waits for nobody.
	other := e.freeItem("BOOK", westside)
	if res := e.mustCheckinAt(central, other); res.Pending || res.TransferTo == nil {
		t.Errorf("a transfer on no list: %+v", res)
	}
	if n := e.queryInt(`SELECT count(*) FROM checkins WHERE batch = '' AND needs_ack <> 0`); n != 0 {
		t.Errorf("%d checkins on no list to acknowledge", n)
	}

	t.Run("OK", func(t *testing.T) {
		e.clock.Set(at("2026-12-01 10:05"))
		if err := e.svc.AcknowledgeCheckin(ctx, e.desk, batch, tr.ID); err != nil {
			t.Fatal(err)
		}
		if got := e.toAcknowledge(batch); !same(got, []string{"I00010"}) {
			t.Errorf("to acknowledge %v, want I00010", got)
		}
		if got := e.queryString(`SELECT acked_at || ' ' || acked_by FROM checkins WHERE id = ?`, tr.ID); got != db.FormatTime(at("2026-12-01 10:05"))+" desk" {
			t.Errorf("acknowledged %q", got)
		}
		// A second click, from another tab: nothing changes, no error.
		e.clock.Set(at("2026-12-01 10:06"))
		if err := e.svc.AcknowledgeCheckin(ctx, e.desk, batch, tr.ID); err != nil {
			t.Errorf("acknowledged twice: %v", err)
		}
		if got := e.queryString(`SELECT acked_at FROM checkins WHERE id = ?`, tr.ID); got != db.FormatTime(at("2026-12-01 10:05")) {
			t.Errorf("acknowledged again at %s", got)
		}
	})

	t.Run("ScannedAgain", func(t *testing.T) {
		// The copy scanned again: its latest checkin says what to do now, once.
		again := e.mustCheckinBatch(central, "I00010", batch)
		if !again.Pending || again.Hold == nil {
			t.Fatalf("scanned again: %+v", again)
		}
		if got := e.toAcknowledge(batch); !same(got, []string{"I00010"}) {
			t.Errorf("to acknowledge %v, want I00010 once", got)
		}
		if err := e.svc.AcknowledgeCheckin(ctx, e.desk, batch, again.ID); err != nil {
			t.Fatal(err)
		}
		if got := e.toAcknowledge(batch); len(got) != 0 {
			t.Errorf("to acknowledge %v, want none", got)
		}
	})

	t.Run("ErrOtherList", func(t *testing.T) {
		err := e.svc.AcknowledgeCheckin(ctx, e.desk, "another-desk", hold.ID)
		if stacks.ErrorCode(err) != stacks.ENOTFOUND {
			t.Errorf("another desk's checkin: %v, want ENOTFOUND", err)
		}
		if err := e.svc.AcknowledgeCheckin(ctx, e.desk, "", hold.ID); stacks.ErrorCode(err) != stacks.ENOTFOUND {
			t.Errorf("no list: %v, want ENOTFOUND", err)
		}
		if n := e.queryInt(`SELECT count(*) FROM checkins WHERE id = ? AND acked_at IS NOT NULL`, hold.ID); n != 0 {
			t.Error("acknowledged from another desk's list")
		}
	})

	t.Run("ErrNoActor", func(t *testing.T) {
		if err := e.svc.AcknowledgeCheckin(ctx, stacks.Actor{}, batch, hold.ID); err == nil {
			t.Error("acknowledged by nobody")
		}
	})
}

func TestCheckinReceipt(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	const batch = "desk-list"
	cards := e.goodPatrons(2)
	var items []string
	for i := 0; i < 4; i++ {
		items = append(items, e.freeItem("BOOK", central, items...))
	}
	// Two patrons' returns, one after the other's, on one desk's list, and a copy
	// that was on nobody's loan.
	e.mustCheckout(cards[0], items[0])
	e.mustCheckout(cards[1], items[1])
	e.mustCheckout(cards[0], items[2])
	e.mustCheckout(cards[1], items[3])
	for _, it := range items {
		e.mustCheckinBatch(central, it, batch)
	}
	e.mustCheckinBatch(central, e.freeItem("BOOK", central, items...), batch)
	first, second := e.patronID(cards[0]), e.patronID(cards[1])

	receipt := func(patronID int64) circulation.CheckinReceipt {
		t.Helper()
		r, err := e.svc.CheckinReceipt(ctx, batch, patronID, 100)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	returned := func(r circulation.CheckinReceipt) []string {
		var out []string
		for _, c := range r.Returns {
			out = append(out, c.Barcode)
		}
		return out
	}

	t.Run("Latest", func(t *testing.T) {
		r := receipt(0)
		if r.Patron.ID != second || r.Patron.Card != cards[1] || !same(returned(r), []string{items[3], items[1]}) ||
			len(r.Others) != 1 || r.Others[0].ID != first {
			t.Errorf("receipt of the latest return's patron: %+v, returns %v", r, returned(r))
		}
	})
	t.Run("Patron", func(t *testing.T) {
		r := receipt(first)
		if r.Patron.ID != first || !same(returned(r), []string{items[2], items[0]}) || len(r.Others) != 1 || r.Others[0].ID != second {
			t.Errorf("receipt of %s: %+v, returns %v", cards[0], r, returned(r))
		}
	})
	t.Run("EmptyList", func(t *testing.T) {
		r, err := e.svc.CheckinReceipt(ctx, "", 0, 100)
		if err != nil || r.Patron.ID != 0 || len(r.Returns) != 0 {
			t.Errorf("no list: %+v, %v", r, err)
		}
	})
	t.Run("ErrNoReturns", func(t *testing.T) {
		nobody := e.queryString(`SELECT card FROM patrons WHERE card NOT IN (?, ?) ORDER BY id LIMIT 1`, cards[0], cards[1])
		if _, err := e.svc.CheckinReceipt(ctx, batch, e.patronID(nobody), 100); stacks.ErrorCode(err) != stacks.ENOTFOUND {
			t.Errorf("a patron with no returns: %v, want ENOTFOUND", err)
		}
	})
}

func TestFindItemTransfer(t *testing.T) {
	find := func(e *env, barcode string) (circulation.Transfer, error) {
		var tr circulation.Transfer
		err := e.d.Read(context.Background(), func(tx *db.Tx) (err error) {
			tr, err = circulation.FindItemTransfer(tx, e.itemID(barcode))
			return err
		})
		return tr, err
	}

	t.Run("HoldPassedOn", func(t *testing.T) {
		// A copy on Central's hold shelf, its hold cancelled: it goes to the next
		// hold, picked up at Westside, with no checkin to print a slip from.
		e := newEnv(t)
		item := e.freeItem("BOOK", central)
		first := e.addHold("P0003", item, central, true)
		if res := e.mustCheckinAt(central, item); res.Hold == nil || res.Hold.InTransit {
			t.Fatalf("not on the hold shelf: %+v", res)
		}
		card := e.goodPatrons(2)[0]
		next := e.addHold(card, item, westside, false)
		out, err := e.svc.CancelHold(context.Background(), e.desk, first, "patron moved")
		if err != nil || out.Next == nil || !out.Next.InTransit {
			t.Fatalf("cancel: %+v, %v", out, err)
		}
		listed := wantOnly(t, "sent from Central", e.transfers(central).Outgoing, item)
		if listed.CheckinID != 0 {
			t.Fatalf("a checkin sent it: %+v", listed)
		}
		tr, err := find(e, item)
		if err != nil {
			t.Fatal(err)
		}
		if tr.To.Name != "Westside" || tr.From.Name != "Central" || tr.Hold == nil || tr.Hold.HoldID != next || tr.Barcode != item {
			t.Errorf("transit %+v (hold %+v)", tr, tr.Hold)
		}
	})

	t.Run("ErrNotInTransit", func(t *testing.T) {
		e := newEnv(t)
		if _, err := find(e, e.freeItem("BOOK", central)); stacks.ErrorCode(err) != stacks.ENOTFOUND {
			t.Errorf("an item on the shelf: %v, want ENOTFOUND", err)
		}
	})
}

func TestCheckinPatronMessage(t *testing.T) {
	// A borrower with a message for the desk: their first return on the list
	// carries it until it is acknowledged, not every return.
	e := newEnv(t)
	const batch = "desk-list"
	card := e.goodPatrons(2)[0]
	e.exec(`UPDATE patrons SET desk_message = 'Has a parcel waiting' WHERE card = ?`, card)
	first := e.freeItem("BOOK", central)
	second := e.freeItem("BOOK", central, first)
	e.mustCheckout(card, first)
	e.mustCheckout(card, second)
	a := e.mustCheckinBatch(central, first, batch)
	b := e.mustCheckinBatch(central, second, batch)
	if !a.Pending || a.PatronMessage != "Has a parcel waiting" || b.Pending || b.PatronMessage != "Has a parcel waiting" {
		t.Fatalf("first %+v\nsecond %+v", a, b)
	}
	if got := e.toAcknowledge(batch); !same(got, []string{first}) {
		t.Errorf("to acknowledge %v, want %s only", got, first)
	}
	if err := e.svc.AcknowledgeCheckin(context.Background(), e.desk, batch, a.ID); err != nil {
		t.Fatal(err)
	}
	if got := e.toAcknowledge(batch); len(got) != 0 {
		t.Errorf("to acknowledge %v, want none", got)
	}
}

func TestAcknowledgeAll(t *testing.T) {
	e := newEnv(t)
	east := e.freeItem("BOOK", eastside)
	west := e.freeItem("BOOK", westside)
	e.mustCheckinBatch(central, east, "one")
	e.mustCheckinBatch(central, west, "two")
	if err := e.svc.AcknowledgeAll(context.Background(), e.desk, "one"); err != nil {
		t.Fatal(err)
	}
	if got := e.toAcknowledge("one"); len(got) != 0 {
		t.Errorf("list one still has %v", got)
	}
	if got := e.toAcknowledge("two"); !same(got, []string{west}) {
		t.Errorf("list two has %v, want %s: another desk's list was acknowledged", got, west)
	}
	if err := e.svc.AcknowledgeAll(context.Background(), e.desk, ""); err != nil {
		t.Errorf("no list: %v", err)
	}
}
