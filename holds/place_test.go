package holds_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/dbtest"
	"github.com/stacks-ils/stacks/holds"
)

// place places a hold in its own write transaction, as circulation.PlaceHold does,
// in the demo library's time zone (UTC).
func place(tb testing.TB, d *db.DB, req holds.PlaceRequest) (holds.Placed, error) {
	tb.Helper()
	var p holds.Placed
	err := d.Write(context.Background(), func(tx *db.Tx) error {
		var err error
		p, err = holds.Place(tx, req, time.UTC)
		return err
	})
	return p, err
}

// otherHolds gives the patron with card n open holds on n fixture titles other
// than I00001's (I00002, I00003...).
func otherHolds(tb testing.TB, d *db.DB, card string, n int) {
	tb.Helper()
	for i := 0; i < n; i++ {
		exec(tb, d, `INSERT INTO holds (record_id, patron_id, pickup_branch_id, placed_at, priority, status)
			SELECT record_id, ?, 1, ?, 1, 'queued' FROM items WHERE barcode = ?`,
			patron(tb, d, card), db.FormatTime(dbtest.Monday.Add(-time.Hour)), fmt.Sprintf("I%05d", i+2))
	}
}

func TestPlace(t *testing.T) {
	tests := []struct {
		name string
		// setup runs first; it may insert holds and loans.
		setup   func(t *testing.T, d *db.DB)
		card    string
		record  string // barcode of a copy of the record held; I00001 by default
		item    string // barcode of the copy of an item-level hold
		pickup  string // CEN by default
		confirm []string

		code  string   // stacks error code; "" for placed (or a warning)
		field string   // the form field the error is about
		warn  []string // warning codes of a *WarningError
		says  []string // words the error message must say
		// refusal is the *RefusalError's reason, for callers that word it.
		refusal string
		// position is the placed hold's place in the queue.
		position int
	}{
		{name: "OK", card: "P0003", position: 1},
		{name: "OKCardAsTyped", card: " p0003 ", position: 1},
		{name: "OKEndOfQueue", card: "P0003", position: 3, setup: func(t *testing.T, d *db.DB) {
			// A copy on the hold shelf for one patron, two in the queue: the new hold is third.
			exec(t, d, `UPDATE items SET status = 'on_hold_shelf' WHERE barcode = 'I00001B'`)
			addHolds(t, d, hold{card: "P0002", status: "waiting", trapped: "I00001B"}, hold{card: "P0001"}, hold{card: "P0004"})
		}},
		{name: "OKItemLevel", card: "P0003", item: "I00001B", pickup: "EAS", position: 1},
		{name: "OKOwingFines", card: "P0002", position: 1},
		{name: "ErrItemOfAnotherRecord", card: "P0003", item: "I00002", code: stacks.EINVALID, says: []string{"not a copy of"}},
		{name: "ErrReferenceItem", card: "P0003", item: "I00001B", code: stacks.ECONFLICT, refusal: holds.RefusedNotForLoan, says: []string{"I00001B", "not for loan"},
			setup: func(t *testing.T, d *db.DB) {
				exec(t, d, `UPDATE items SET item_type_id = 3 WHERE barcode = 'I00001B'`)
			}},
		{name: "ErrCardExpired", card: "P0004", code: stacks.ECONFLICT, field: "card", refusal: holds.RefusedCardExpired, says: []string{"P0004", "expired on 2026-10-16", "renew"}},
		{name: "ErrPatronBlocked", card: "P0005", code: stacks.ECONFLICT, field: "card", refusal: holds.RefusedBlocked,
			says: []string{"Emery Barred", "blocked", "Repeated damage to items; see the branch manager before lending."}},
		{name: "ErrHoldLimit", card: "P0003", code: stacks.ECONFLICT, field: "card", refusal: holds.RefusedHoldLimit, says: []string{"Casey Waiting", "2 holds", "Adult"},
			setup: func(t *testing.T, d *db.DB) {
				exec(t, d, `UPDATE patron_categories SET max_holds = 2 WHERE id = 1`)
				otherHolds(t, d, "P0003", 2)
			}},
		{name: "HoldLimitNotReached", card: "P0003", position: 1,
			setup: func(t *testing.T, d *db.DB) {
				exec(t, d, `UPDATE patron_categories SET max_holds = 2 WHERE id = 1`)
				otherHolds(t, d, "P0003", 1)
			}},
		{name: "HoldLimitCountsWaitingHolds", card: "P0003", code: stacks.ECONFLICT, field: "card",
			setup: func(t *testing.T, d *db.DB) {
				exec(t, d, `UPDATE patron_categories SET max_holds = 1 WHERE id = 1`)
				exec(t, d, `UPDATE items SET status = 'on_hold_shelf' WHERE barcode = 'I00002'`)
				exec(t, d, `INSERT INTO holds (record_id, patron_id, pickup_branch_id, placed_at, priority, status, trapped_item_id)
					SELECT record_id, ?, 1, ?, 0, 'waiting', id FROM items WHERE barcode = 'I00002'`, patron(t, d, "P0003"), db.FormatTime(dbtest.Monday))
			}},
		{name: "HoldLimitIgnoresClosedHolds", card: "P0003", position: 1,
			setup: func(t *testing.T, d *db.DB) {
				exec(t, d, `UPDATE patron_categories SET max_holds = 1 WHERE id = 1`)
				otherHolds(t, d, "P0003", 1)
				exec(t, d, `UPDATE holds SET status = 'fulfilled' WHERE patron_id = ?`, patron(t, d, "P0003"))
			}},
		// The limit was lowered below what the patron holds already: the message must
		// still give the limit (1), not only the count (2).
		{name: "ErrHoldLimitLoweredBelowCount", card: "P0003", code: stacks.ECONFLICT, field: "card", says: []string{"2 holds", "1"},
			setup: func(t *testing.T, d *db.DB) {
				exec(t, d, `UPDATE patron_categories SET max_holds = 1 WHERE id = 1`)
				otherHolds(t, d, "P0003", 2)
			}},
		{name: "WarnAlreadyHolds", card: "P0003", warn: []string{holds.WarnAlreadyHolds}, says: []string{"Casey Waiting already has a hold on"},
			setup: func(t *testing.T, d *db.DB) { addHolds(t, d, hold{card: "P0003"}) }},
		{name: "WarnAlreadyHoldsConfirmed", card: "P0003", confirm: []string{holds.WarnAlreadyHolds}, position: 2,
			setup: func(t *testing.T, d *db.DB) { addHolds(t, d, hold{card: "P0003"}) }},
		{name: "WarnAlreadyHoldsWaiting", card: "P0003", warn: []string{holds.WarnAlreadyHolds},
			setup: func(t *testing.T, d *db.DB) {
				addHolds(t, d, hold{card: "P0003", status: "waiting", trapped: "I00001B"})
			}},
		{name: "ClosedHoldNoWarning", card: "P0003", position: 1,
			setup: func(t *testing.T, d *db.DB) {
				addHolds(t, d, hold{card: "P0003"})
				exec(t, d, `UPDATE holds SET status = 'cancelled', priority = 0`)
			}},
		{name: "WarnHasCopy", card: "P0003", warn: []string{holds.WarnHasCopy}, says: []string{"Casey Waiting has a copy of", "checked out"},
			setup: func(t *testing.T, d *db.DB) { lend(t, d, "P0003", "I00001") }},
		{name: "WarnHasCopyConfirmed", card: "P0003", confirm: []string{holds.WarnHasCopy}, position: 1,
			setup: func(t *testing.T, d *db.DB) { lend(t, d, "P0003", "I00001") }},
		{name: "ReturnedCopyNoWarning", card: "P0003", position: 1,
			setup: func(t *testing.T, d *db.DB) {
				lend(t, d, "P0003", "I00001")
				exec(t, d, `UPDATE loans SET returned_at = ? WHERE returned_at IS NULL`, db.FormatTime(dbtest.Monday))
			}},
		{name: "WarnBoth", card: "P0003", confirm: []string{holds.WarnHasCopy}, warn: []string{holds.WarnAlreadyHolds, holds.WarnHasCopy},
			setup: func(t *testing.T, d *db.DB) {
				addHolds(t, d, hold{card: "P0003"})
				lend(t, d, "P0003", "I00001")
			}},
		{name: "WarnBothConfirmed", card: "P0003", confirm: []string{holds.WarnHasCopy, holds.WarnAlreadyHolds}, position: 2,
			setup: func(t *testing.T, d *db.DB) {
				addHolds(t, d, hold{card: "P0003"})
				lend(t, d, "P0003", "I00001")
			}},
		{name: "ErrUnknownCard", card: "P9999", code: stacks.ENOTFOUND, field: "card", says: []string{"P9999"}},
		{name: "ErrNoCard", card: "", code: stacks.EINVALID, field: "card"},
		{name: "ErrBadPickup", card: "P0003", pickup: "XYZ", code: stacks.EINVALID, field: "pickup", says: []string{"pickup branch"}},
		{name: "ErrNoPickup", card: "P0003", pickup: " ", code: stacks.EINVALID, field: "pickup"},
		{name: "ErrUnknownRecord", card: "P0003", record: "-", code: stacks.ENOTFOUND},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := mustOpenDB(t)
			if tt.setup != nil {
				tt.setup(t, d)
			}
			req := holds.PlaceRequest{Actor: desk, PatronCard: tt.card, PickupBranchCode: tt.pickup, Confirm: tt.confirm}
			if req.PickupBranchCode == "" {
				req.PickupBranchCode = "CEN"
			}
			switch tt.record {
			case "":
				req.RecordID = item(t, d, "I00001").RecordID
			case "-":
				req.RecordID = 999999
			default:
				req.RecordID = item(t, d, tt.record).RecordID
			}
			if tt.item != "" {
				req.ItemID = item(t, d, tt.item).ID
			}
			before := id(t, d, `SELECT count(*) FROM holds`)
			audits := id(t, d, `SELECT count(*) FROM audit_log WHERE action = 'hold.place'`)

			placed, err := place(t, d, req)

			var refusal *holds.RefusalError
			if tt.refusal != "" && (!errors.As(err, &refusal) || refusal.Reason != tt.refusal) {
				t.Errorf("err = %v, want a refusal %q", err, tt.refusal)
			}
			var w *holds.WarningError
			switch {
			case len(tt.warn) > 0:
				if !errors.As(err, &w) {
					t.Fatalf("err = %v, want a *WarningError", err)
				}
				var codes []string
				for _, x := range w.Warnings {
					codes = append(codes, x.Code)
				}
				if strings.Join(codes, ",") != strings.Join(tt.warn, ",") {
					t.Errorf("warnings %v, want %v", codes, tt.warn)
				}
				if w.PatronName != "Casey Waiting" {
					t.Errorf("warning names %q", w.PatronName)
				}
				for _, s := range tt.says {
					if !strings.Contains(w.Error(), s) {
						t.Errorf("%q does not say %q", w.Error(), s)
					}
				}
			case tt.code != "":
				if got := stacks.ErrorCode(err); got != tt.code {
					t.Fatalf("err = %v (code %q), want code %q", err, got, tt.code)
				}
				if errors.As(err, &w) {
					t.Fatalf("a refusal came as a warning: %v", err)
				}
				if tt.field != "" && stacks.ErrorField(err) != tt.field {
					t.Errorf("error about field %q, want %q", stacks.ErrorField(err), tt.field)
				}
				for _, s := range tt.says {
					if msg := stacks.ErrorMessage(err); !strings.Contains(msg, s) {
						t.Errorf("%q does not say %q", msg, s)
					}
				}
			default:
				if err != nil {
					t.Fatal(err)
				}
			}
			if err != nil {
				if n := id(t, d, `SELECT count(*) FROM holds`); n != before {
					t.Errorf("%d holds after a refusal, had %d", n, before)
				}
				if n := id(t, d, `SELECT count(*) FROM audit_log WHERE action = 'hold.place'`); n != audits {
					t.Errorf("a refused hold was audited")
				}
				return
			}

			// Placed: what it says, the row, and the audit entry.
			wantCard := strings.ToUpper(strings.TrimSpace(tt.card))
			if placed.HoldID == 0 || placed.Position != tt.position || placed.PatronCard != wantCard {
				t.Errorf("placed %+v, want position %d", placed, tt.position)
			}
			wantTitle := queryString(t, d, `SELECT title FROM records WHERE id = ?`, req.RecordID)
			if placed.Title != wantTitle || placed.PatronID != patron(t, d, wantCard) || placed.PatronName == "" {
				t.Errorf("placed %+v, want title %q", placed, wantTitle)
			}
			wantPickup := map[string]string{"CEN": "Central", "EAS": "Eastside"}[req.PickupBranchCode]
			if placed.PickupBranchName != wantPickup {
				t.Errorf("pickup %q, want %q", placed.PickupBranchName, wantPickup)
			}
			itemID := "-"
			if tt.item != "" {
				itemID = queryString(t, d, `SELECT id FROM items WHERE barcode = ?`, tt.item)
			}
			row := queryString(t, d, `SELECT status || ' ' || priority || ' ' || coalesce(CAST(item_id AS TEXT), '-') || ' ' || placed_at || ' ' || b.code
				|| ' ' || coalesce(suspended_until, '-') || ' ' || coalesce(CAST(trapped_item_id AS TEXT), '-')
				FROM holds h JOIN branches b ON b.id = h.pickup_branch_id WHERE h.id = ?`, placed.HoldID)
			if want := "queued " + strconv.Itoa(tt.position) + " " + itemID + " 2026-11-30T10:00:00Z " + req.PickupBranchCode + " - -"; row != want {
				t.Errorf("hold row %q, want %q", row, want)
			}
			detail := queryString(t, d, `SELECT actor || ': ' || detail FROM audit_log WHERE action = 'hold.place' AND object_type = 'hold' AND object_id = ?`, placed.HoldID)
			if !strings.HasPrefix(detail, "desk: "+wantTitle+" for "+wantCard+", pickup "+req.PickupBranchCode) {
				t.Errorf("audit %q", detail)
			}
			if tt.item != "" && !strings.Contains(detail, "item "+tt.item) {
				t.Errorf("audit %q does not name the item", detail)
			}
			if len(tt.confirm) > 0 && !strings.Contains(detail, "confirmed: ") {
				t.Errorf("audit %q does not say what was confirmed", detail)
			}
			// The queue stays numbered 1..n.
			if got := queueOf(t, d, req.RecordID); got != seq(tt.position) {
				t.Errorf("queue %s, want %s", got, seq(tt.position))
			}
		})
	}

	t.Run("ByPatronID", func(t *testing.T) {
		d := mustOpenDB(t)
		p, err := place(t, d, holds.PlaceRequest{Actor: desk, RecordID: item(t, d, "I00001").RecordID, PatronID: patron(t, d, "P0001"),
			PatronCard: "P0003", PickupBranchCode: "cen"})
		if err != nil {
			t.Fatal(err)
		}
		if p.PatronCard != "P0001" || p.PatronName != "Alex Reader" || p.PickupBranchName != "Central" {
			t.Errorf("placed %+v, want for P0001 (the id wins over the card)", p)
		}
	})
}

// lend gives the patron with card a current loan of barcode.
func lend(tb testing.TB, d *db.DB, card, barcode string) {
	tb.Helper()
	exec(tb, d, `INSERT INTO loans (item_id, patron_id, branch_id, issued_at, due_at) SELECT id, ?, 1, ?, ? FROM items WHERE barcode = ?`,
		patron(tb, d, card), db.FormatTime(dbtest.Monday.Add(-24*time.Hour)), db.FormatTime(dbtest.Monday.AddDate(0, 0, 20)), barcode)
	exec(tb, d, `UPDATE items SET status = 'on_loan' WHERE barcode = ?`, barcode)
}

// queueOf lists the priorities of a record's queued holds in queue order: "1,2,3".
func queueOf(tb testing.TB, d *db.DB, recordID int64) string {
	tb.Helper()
	return queryString(tb, d, `SELECT string_agg(CAST(priority AS TEXT), ',' ORDER BY priority, id) FROM holds
		WHERE record_id = ? AND status = 'queued'`, recordID)
}

// seq is "1,2,...,n".
func seq(n int) string {
	s := make([]string, n)
	for i := range s {
		s[i] = strconv.Itoa(i + 1)
	}
	return strings.Join(s, ",")
}
