package circulation_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/circulation"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/dbtest"
	"github.com/stacks-ils/stacks/holds"
	"github.com/stacks-ils/stacks/library"
)

// placeHold places a hold for the patron with card on the record of barcode, pickup
// at the branch with code, through the service as the desk does.
func (e *env) placeHold(card, barcode, pickup string, confirm ...string) (holds.Placed, error) {
	e.tb.Helper()
	return e.svc.PlaceHold(context.Background(), holds.PlaceRequest{
		Actor: e.desk, RecordID: e.recordID(barcode), PatronCard: card, PickupBranchCode: pickup, Confirm: confirm,
	})
}

// trapHere sets the clock to now and checks barcode in at branch, where a hold
// should set it aside; it returns the trap.
func (e *env) trapHere(branch int64, barcode string, now time.Time) *holds.Trap {
	e.tb.Helper()
	e.clock.Set(now)
	r, err := e.checkinAt(branch, barcode, "")
	if err != nil {
		e.tb.Fatalf("checkin %s at %d: %v", barcode, branch, err)
	}
	if r.Hold == nil {
		e.tb.Fatalf("checkin %s at %d trapped no hold", barcode, branch)
	}
	return r.Hold
}

// holdState is "status priority trapped-barcode pickup_by" of a hold ("-" for none).
func (e *env) holdState(id int64) string {
	e.tb.Helper()
	return e.queryString(`SELECT h.status || ' ' || h.priority || ' ' || coalesce(i.barcode, '-') || ' ' || coalesce(h.pickup_by, '-')
		FROM holds h LEFT JOIN items i ON i.id = h.trapped_item_id WHERE h.id = ?`, id)
}

// itemPlace is "status current-branch transit-to" of an item ("-" for none).
func (e *env) itemPlace(barcode string) string {
	e.tb.Helper()
	return e.queryString(`SELECT status || ' ' || current_branch_id || ' ' || coalesce(CAST(transit_to_id AS TEXT), '-') FROM items WHERE barcode = ?`, barcode)
}

// queue lists a record's open holds as "CARD:status:priority", in queue order.
func (e *env) queue(barcode string) string {
	e.tb.Helper()
	var hs []holds.Hold
	err := e.d.Read(context.Background(), func(tx *db.Tx) error {
		var err error
		hs, err = holds.RecordQueue(tx, e.recordID(barcode))
		return err
	})
	if err != nil {
		e.tb.Fatal(err)
	}
	s := make([]string, len(hs))
	for i, h := range hs {
		s[i] = fmt.Sprintf("%s:%s:%d", h.PatronCard, h.Status, h.Priority)
	}
	return strings.Join(s, " ")
}

// TestPlaceHold is step 7 of the desk session, then step 8's "Hold found".
func TestPlaceHold(t *testing.T) {
	t.Run("DeskScenario", func(t *testing.T) {
		e := newEnv(t)
		for i := 6; i <= 10; i++ {
			e.mustCheckout("P0002", fmt.Sprintf("I%05d", i), circulation.BlockFines)
		}
		p, err := e.placeHold("P0003", "I00010", "CEN")
		if err != nil {
			t.Fatal(err)
		}
		if p.PatronName != "Casey Waiting" || p.PatronCard != "P0003" || p.Position != 1 || p.PickupBranchName != "Central" ||
			p.Title != "The Left Hand of Darkness" || p.HoldID == 0 {
			t.Errorf("placed %+v", p)
		}
		if e.auditCount("hold.place") != 1 {
			t.Error("no hold.place audit entry")
		}
		r, err := e.checkinAt(1, "I00010", "desk")
		if err != nil {
			t.Fatal(err)
		}
		if r.Hold == nil || r.Hold.HoldID != p.HoldID || r.Hold.PatronName != "Casey Waiting" || r.Hold.PickupBranchName != "Central" {
			t.Fatalf("hold found %+v", r.Hold)
		}
	})

	t.Run("WarnAlreadyHoldsThenConfirm", func(t *testing.T) {
		e := newEnv(t)
		if _, err := e.placeHold("P0003", "I00010", "CEN"); err != nil {
			t.Fatal(err)
		}
		_, err := e.placeHold("P0003", "I00010", "EAS")
		var w *holds.WarningError
		if !errors.As(err, &w) || len(w.Warnings) != 1 || w.Warnings[0].Code != holds.WarnAlreadyHolds {
			t.Fatalf("err = %v, want a warning %s", err, holds.WarnAlreadyHolds)
		}
		p, err := e.placeHold("P0003", "I00010", "EAS", holds.WarnAlreadyHolds)
		if err != nil {
			t.Fatal(err)
		}
		if p.Position != 2 || p.PickupBranchName != "Eastside" {
			t.Errorf("placed %+v", p)
		}
	})

	t.Run("ErrCardExpired", func(t *testing.T) {
		e := newEnv(t)
		_, err := e.placeHold("P0004", "I00010", "CEN")
		wantCode(t, err, stacks.ECONFLICT)
		wantContains(t, stacks.ErrorMessage(err), "P0004", "expired")
	})
}

// TestHoldTrapDeadline: a copy trapped for a hold waiting at the branch where it
// is checked in may be collected until closing on the rule's hold_pickup_days-th
// open day after the day of the trap.
func TestHoldTrapDeadline(t *testing.T) {
	tests := []struct {
		name   string
		now    string // UTC
		branch int64  // checked in at, and the pickup branch
		days   int    // the Book rule's hold_pickup_days; 0 keeps the demo's 7
		tz     string // the library's time zone; "" for the demo's UTC
		want   string // UTC
	}{
		// Tuesday 1 to Saturday 5 December, Monday 7 and Tuesday 8: Sunday 6th closed.
		{name: "MondayCentral", now: "2026-11-30 10:00", branch: 1, want: "2026-12-08 20:00"},
		// After closing, the day of the trap still does not count.
		{name: "MondayAfterClosing", now: "2026-11-30 21:30", branch: 1, want: "2026-12-08 20:00"},
		{name: "RulePickupDays", now: "2026-11-30 10:00", branch: 1, days: 3, want: "2026-12-03 20:00"},
		// Westside is closed on Wednesday 2 December (staff training) and Sunday 6th:
		// the 1st, 3rd, 4th, 5th, 7th, 8th and 9th.
		{name: "WestsideTrainingDay", now: "2026-11-30 10:00", branch: 3, want: "2026-12-09 20:00"},
		// Friday 18 December: Saturday 19th (1), Sunday 20th closed, 21st to 24th (2-5),
		// Christmas Friday 25th, Boxing Day Saturday 26th and Sunday 27th closed,
		// Monday 28th (6), Tuesday 29th (7).
		{name: "FridayBeforeChristmas", now: "2026-12-18 15:00", branch: 1, want: "2026-12-29 20:00"},
		// Saturday 19th: 21st to 24th (1-4), then 28th, 29th, 30th (5-7).
		{name: "SaturdayBeforeChristmas", now: "2026-12-19 11:00", branch: 1, want: "2026-12-30 20:00"},
		// Thursday 24th: 28th to 31st (1-4), New Year's Day closed, Saturday 2 January
		// (5), Sunday 3rd closed, Monday 4th (6), Tuesday 5th (7).
		{name: "ChristmasEveToNewYear", now: "2026-12-24 10:00", branch: 1, want: "2027-01-05 20:00"},
		// New York: Monday 10:00 local; closing on Tuesday 8 December at 20:00 EST.
		{name: "LibraryTimeZone", now: "2026-11-30 15:00", branch: 1, tz: "America/New_York", want: "2026-12-09 01:00"},
		// Monday 22:00 in New York is Tuesday in UTC: the day of the trap is Monday.
		{name: "LibraryTimeZoneEvening", now: "2026-12-01 03:00", branch: 1, tz: "America/New_York", want: "2026-12-09 01:00"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			if tt.days != 0 {
				e.exec(`UPDATE circ_rules SET hold_pickup_days = ? WHERE item_type_id = 1 AND patron_category_id IS NULL AND branch_id IS NULL`, tt.days)
			}
			loc := time.UTC
			if tt.tz != "" {
				e.exec(`UPDATE preferences SET value = ? WHERE name = 'timezone'`, tt.tz)
				var err error
				if loc, err = time.LoadLocation(tt.tz); err != nil {
					t.Fatal(err)
				}
			}
			hold := e.addHold("P0003", "I00010", tt.branch, false)
			now := at(tt.now)
			tr := e.trapHere(tt.branch, "I00010", now)
			want := at(tt.want)
			if tr.HoldID != hold || tr.Status != holds.StatusWaiting || tr.InTransit || !tr.PickupBy.Equal(want) {
				t.Errorf("trap %+v, want waiting until %s", tr, want)
			}
			if got := e.holdState(hold); got != "waiting 0 I00010 "+db.FormatTime(want) {
				t.Errorf("hold %q", got)
			}
			if got := e.queryString(`SELECT waiting_since FROM holds WHERE id = ?`, hold); got != db.FormatTime(now) {
				t.Errorf("waiting since %s, want %s", got, db.FormatTime(now))
			}
			if got := e.itemPlace("I00010"); got != fmt.Sprintf("on_hold_shelf %d -", tt.branch) {
				t.Errorf("item %q", got)
			}
			// The same as the branch calendar says.
			days := tt.days
			if days == 0 {
				days = 7
			}
			var cal *library.Calendar
			err := e.d.Read(context.Background(), func(tx *db.Tx) error {
				var err error
				cal, err = library.LoadCalendar(tx, tt.branch, loc, now, now.AddDate(0, 0, 90))
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if c := cal.AddOpenDays(now, days); !c.Equal(want) {
				t.Errorf("the calendar says %s, the test %s", c, want)
			}
		})
	}
}

// TestHoldTrapChoice: which hold a returned copy goes to, and where it goes.
func TestHoldTrapChoice(t *testing.T) {
	type h struct {
		card      string
		pickup    int64
		itemLevel string // barcode of an item-level hold
		suspended string
	}
	tests := []struct {
		name  string
		holds []h
		want  int    // index of the hold trapped
		state string // of the trapped hold, without pickup_by
		item  string // itemPlace of I00010
	}{
		{"FirstInQueue", []h{{card: "P0003", pickup: 1}, {card: "P0002", pickup: 1}}, 0, "waiting 0 I00010", "on_hold_shelf 1 -"},
		{"ItemLevelBeforeRecordLevel", []h{{card: "P0003", pickup: 1}, {card: "P0002", pickup: 1, itemLevel: "I00010"}}, 1,
			"waiting 0 I00010", "on_hold_shelf 1 -"},
		{"ItemLevelForOtherCopySkipped", []h{{card: "P0002", pickup: 1, itemLevel: "I00010B"}, {card: "P0003", pickup: 1}}, 1,
			"waiting 0 I00010", "on_hold_shelf 1 -"},
		{"SuspendedSkipped", []h{{card: "P0003", pickup: 1, suspended: "2026-12-15"}, {card: "P0002", pickup: 1}}, 1,
			"waiting 0 I00010", "on_hold_shelf 1 -"},
		{"PickupHereWaiting", []h{{card: "P0003", pickup: 1}}, 0, "waiting 0 I00010", "on_hold_shelf 1 -"},
		{"PickupElsewhereInTransit", []h{{card: "P0003", pickup: 2}}, 0, "in_transit 0 I00010", "in_transit 1 2"},
		{"ItemLevelPickupElsewhere", []h{{card: "P0003", pickup: 1}, {card: "P0002", pickup: 3, itemLevel: "I00010"}}, 1,
			"in_transit 0 I00010", "in_transit 1 3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			e.addCopy("I00010", "I00010B", 2)
			var ids []int64
			for _, x := range tt.holds {
				b := "I00010"
				if x.itemLevel != "" {
					b = x.itemLevel
				}
				hid := e.addHold(x.card, b, x.pickup, x.itemLevel != "")
				if x.suspended != "" {
					err := e.d.Write(context.Background(), func(tx *db.Tx) error {
						return holds.Suspend(tx, e.desk, hid, x.suspended, at("2026-11-30 00:00"))
					})
					if err != nil {
						t.Fatal(err)
					}
				}
				ids = append(ids, hid)
			}
			tr := e.trapHere(1, "I00010", dbtest.Monday)
			if tr.HoldID != ids[tt.want] || tr.PatronCard != tt.holds[tt.want].card {
				t.Fatalf("trapped %+v, want hold %d", tr, ids[tt.want])
			}
			state := e.holdState(ids[tt.want])
			if tr.InTransit {
				if state != tt.state+" -" || !tr.PickupBy.IsZero() || tr.Status != holds.StatusInTransit {
					t.Errorf("hold %q, trap %+v; want in transit without a deadline", state, tr)
				}
			} else if state != tt.state+" 2026-12-08T20:00:00Z" || tr.Status != holds.StatusWaiting {
				t.Errorf("hold %q, trap %+v", state, tr)
			}
			if got := e.itemPlace("I00010"); got != tt.item {
				t.Errorf("item %q, want %q", got, tt.item)
			}
			// The holds left in the queue are numbered 1..n.
			n := 0
			for _, id := range ids {
				if p := e.queryInt(`SELECT max(priority) FROM holds WHERE id = ? AND status = 'queued'`, id); p != 0 {
					n++
					if p != int64(n) {
						t.Errorf("hold %d at priority %d, want %d", id, p, n)
					}
				}
			}
		})
	}
}

func TestCancelHold(t *testing.T) {
	// Each setup returns the hold to cancel and the one behind it, if any (0).
	waitingAt := func(e *env, branch int64) int64 {
		hold := e.addHold("P0003", "I00010", branch, false)
		e.trapHere(branch, "I00010", dbtest.Monday)
		return hold
	}
	tests := []struct {
		name   string
		setup  func(e *env) (hold, next int64)
		reason string

		code     string // stacks error code; "" for cancelled
		barcode  string // HoldOutcome.Barcode
		next     string // "CARD " + holdState of HoldOutcome.Next
		transfer int64  // HoldOutcome.TransferTo.ID
		item     string // itemPlace of I00010 afterwards
	}{
		{name: "Queued", reason: "patron asked", item: "available 1 -", setup: func(e *env) (int64, int64) {
			return e.addHold("P0003", "I00010", 1, false), e.addHold("P0002", "I00010", 1, false)
		}},
		{name: "QueuedCopyOnLoan", reason: "patron asked", item: "on_loan 1 -", setup: func(e *env) (int64, int64) {
			e.mustCheckout("P0001", "I00010")
			return e.addHold("P0003", "I00010", 1, false), 0
		}},
		// Seven open days after Tuesday 1 December, Sunday 6th closed: the 9th.
		{name: "WaitingGoesToNextHold", reason: "patron asked", barcode: "I00010", next: "P0002 waiting 0 I00010 2026-12-09T20:00:00Z", item: "on_hold_shelf 1 -",
			setup: func(e *env) (int64, int64) {
				return waitingAt(e, 1), e.addHold("P0002", "I00010", 1, false)
			}},
		{name: "WaitingNextHoldElsewhere", reason: "patron asked", barcode: "I00010", next: "P0002 in_transit 0 I00010 -", item: "in_transit 1 2",
			setup: func(e *env) (int64, int64) {
				return waitingAt(e, 1), e.addHold("P0002", "I00010", 2, false)
			}},
		{name: "WaitingBackOnShelf", reason: "patron asked", barcode: "I00010", item: "available 1 -",
			setup: func(e *env) (int64, int64) { return waitingAt(e, 1), 0 }},
		{name: "WaitingNextSuspended", reason: "patron asked", barcode: "I00010", item: "available 1 -",
			setup: func(e *env) (int64, int64) {
				hold := waitingAt(e, 1)
				next := e.addHold("P0002", "I00010", 1, false)
				e.exec(`UPDATE holds SET suspended_until = '2026-12-15' WHERE id = ?`, next)
				return hold, 0
			}},
		{name: "WaitingNextWantsAnotherCopy", reason: "patron asked", barcode: "I00010", item: "available 1 -",
			setup: func(e *env) (int64, int64) {
				hold := waitingAt(e, 1)
				e.addCopy("I00010", "I00010B", 1)
				e.addHold("P0002", "I00010B", 1, true)
				return hold, 0
			}},
		// I00010 belongs to Central: waiting at Westside, it goes home.
		{name: "WaitingAtOtherBranchGoesHome", reason: "patron asked", barcode: "I00010", transfer: 1, item: "in_transit 3 1",
			setup: func(e *env) (int64, int64) { return waitingAt(e, 3), 0 }},
		// At Westside, Wednesday 2nd is closed too: the 10th.
		{name: "WaitingAtOtherBranchNextHoldThere", reason: "patron asked", barcode: "I00010", next: "P0002 waiting 0 I00010 2026-12-10T20:00:00Z", item: "on_hold_shelf 3 -",
			setup: func(e *env) (int64, int64) {
				return waitingAt(e, 3), e.addHold("P0002", "I00010", 3, false)
			}},
		{name: "ErrNoReason", code: stacks.EINVALID, item: "on_hold_shelf 1 -",
			setup: func(e *env) (int64, int64) { return waitingAt(e, 1), e.addHold("P0002", "I00010", 1, false) }},
		{name: "ErrAlreadyCancelled", reason: "again", code: stacks.ECONFLICT, item: "available 1 -",
			setup: func(e *env) (int64, int64) {
				hold := e.addHold("P0003", "I00010", 1, false)
				if _, err := e.svc.CancelHold(context.Background(), e.desk, hold, "patron asked"); err != nil {
					e.tb.Fatal(err)
				}
				return hold, 0
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			hold, next := tt.setup(e)
			before := e.holdState(hold)
			e.clock.Set(at("2026-12-01 10:00"))
			out, err := e.svc.CancelHold(context.Background(), e.desk, hold, tt.reason)
			if got := e.itemPlace("I00010"); got != tt.item {
				t.Errorf("item %q, want %q", got, tt.item)
			}
			if tt.code != "" {
				wantCode(t, err, tt.code)
				if got := e.holdState(hold); got != before {
					t.Errorf("hold %q after a refusal, was %q", got, before)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := e.queryString(`SELECT status || '|' || closed_at || '|' || cancel_reason FROM holds WHERE id = ?`, hold); got != "cancelled|2026-12-01T10:00:00Z|"+tt.reason {
				t.Errorf("hold %q", got)
			}
			if n := e.queryInt(`SELECT count(*) FROM audit_log WHERE action = 'hold.cancelled' AND object_id = ?`, hold); n != 1 {
				t.Errorf("%d hold.cancelled audit entries", n)
			}
			if out.Barcode != tt.barcode {
				t.Errorf("outcome barcode %q, want %q", out.Barcode, tt.barcode)
			}
			switch {
			case tt.next == "" && out.Next != nil:
				t.Errorf("the copy went to hold %+v", out.Next)
			case tt.next == "":
			case out.Next == nil || out.Next.HoldID != next:
				t.Errorf("next %+v, want hold %d: %s", out.Next, next, tt.next)
			case out.Next.PatronCard+" "+e.holdState(next) != tt.next:
				t.Errorf("next %s %q, want %q", out.Next.PatronCard, e.holdState(next), tt.next)
			case out.Next.Status != strings.Fields(tt.next)[1] || out.Next.InTransit != (out.Next.Status == holds.StatusInTransit):
				t.Errorf("next %+v", out.Next)
			}
			switch {
			case tt.transfer == 0 && out.TransferTo != nil:
				t.Errorf("transfer %+v", out.TransferTo)
			case tt.transfer != 0 && (out.TransferTo == nil || out.TransferTo.ID != tt.transfer || out.TransferTo.Name != "Central"):
				t.Errorf("transfer %+v, want Central", out.TransferTo)
			}
			// The queue stays numbered 1..n.
			n := int64(0)
			for _, p := range e.queryStrings(`SELECT priority FROM holds WHERE record_id = ? AND status = 'queued' ORDER BY priority`, e.recordID("I00010")) {
				n++
				if p != fmt.Sprint(n) {
					t.Errorf("queue priorities not 1..n: %s at %d", p, n)
				}
			}
		})
	}
}

func TestExpireHold(t *testing.T) {
	// P0003's hold is trapped at Central on Monday 30 November: it may be collected
	// until closing on Tuesday 8 December.
	tests := []struct {
		name   string
		now    string
		setup  func(e *env, hold int64) // after the trap
		expire func(e *env, hold int64) int64

		code string   // stacks error code; "" for expired
		says []string // the refusal says
		not  []string // and does not say
		next string   // "CARD status pickup_by" of the next hold
		item string   // itemPlace of I00010 afterwards
	}{
		{name: "ErrBeforePickupBy", now: "2026-12-08 19:59", code: stacks.ECONFLICT, says: []string{"Casey Waiting", "2026-12-08 20:00"},
			item: "on_hold_shelf 1 -"},
		{name: "ErrAtPickupBy", now: "2026-12-08 20:00", code: stacks.ECONFLICT, item: "on_hold_shelf 1 -"},
		{name: "Reshelved", now: "2026-12-09 09:00", item: "available 1 -"},
		// Seven open days after Wednesday 9 December, Sunday 13th closed: the 17th.
		{name: "NextHold", now: "2026-12-09 09:00", item: "on_hold_shelf 1 -", next: "P0002 waiting 2026-12-17T20:00:00Z",
			setup: func(e *env, _ int64) { e.addHold("P0002", "I00010", 1, false) }},
		{name: "NextHoldElsewhere", now: "2026-12-09 09:00", item: "in_transit 1 2", next: "P0002 in_transit -",
			setup: func(e *env, _ int64) { e.addHold("P0002", "I00010", 2, false) }},
		{name: "ErrAlreadyExpired", now: "2026-12-09 09:00", code: stacks.ECONFLICT, not: []string{"has not expired"}, item: "available 1 -",
			setup: func(e *env, hold int64) {
				e.clock.Set(at("2026-12-09 08:00"))
				if _, err := e.svc.ExpireHold(context.Background(), e.desk, hold); err != nil {
					e.tb.Fatal(err)
				}
			}},
		// A queued hold has no pickup deadline to be past: the refusal must not give
		// one (a zero time reads "0001-01-01 00:00").
		{name: "ErrQueuedHold", now: "2026-12-09 09:00", code: stacks.ECONFLICT, not: []string{"0001-01-01"}, item: "on_hold_shelf 1 -",
			expire: func(e *env, _ int64) int64 { return e.addHold("P0002", "I00010", 1, false) }},
		{name: "ErrInTransit", now: "2026-12-09 09:00", code: stacks.ECONFLICT, not: []string{"0001-01-01"}, item: "on_hold_shelf 1 -",
			expire: func(e *env, _ int64) int64 {
				e.addCopy("I00010", "I00010B", 1)
				other := e.addHold("P0002", "I00010", 2, false)
				e.trapHere(1, "I00010B", at("2026-11-30 10:00"))
				return other
			}},
		{name: "ErrUnknownHold", now: "2026-12-09 09:00", code: stacks.ENOTFOUND, item: "on_hold_shelf 1 -",
			expire: func(*env, int64) int64 { return 999999 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			hold := e.addHold("P0003", "I00010", 1, false)
			if tr := e.trapHere(1, "I00010", dbtest.Monday); !tr.PickupBy.Equal(at("2026-12-08 20:00")) {
				t.Fatalf("pickup by %s", tr.PickupBy)
			}
			if tt.setup != nil {
				tt.setup(e, hold)
			}
			target := hold
			if tt.expire != nil {
				target = tt.expire(e, hold)
			}
			before := e.queryString(`SELECT coalesce(max(status), '') FROM holds WHERE id = ?`, target)
			e.clock.Set(at(tt.now))
			out, err := e.svc.ExpireHold(context.Background(), e.desk, target)
			if got := e.itemPlace("I00010"); got != tt.item {
				t.Errorf("item %q, want %q", got, tt.item)
			}
			if tt.code != "" {
				wantCode(t, err, tt.code)
				msg := stacks.ErrorMessage(err)
				wantContains(t, msg, tt.says...)
				for _, s := range tt.not {
					if strings.Contains(msg, s) {
						t.Errorf("%q says %q", msg, s)
					}
				}
				if got := e.queryString(`SELECT coalesce(max(status), '') FROM holds WHERE id = ?`, target); got != before {
					t.Errorf("hold %s after a refusal, was %s", got, before)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := e.queryString(`SELECT status || '|' || closed_at || '|' || cancel_reason FROM holds WHERE id = ?`, hold); got !=
				"expired|"+db.FormatTime(at(tt.now))+"|not collected in time" {
				t.Errorf("hold %q", got)
			}
			if e.auditCount("hold.expired") != 1 {
				t.Error("no hold.expired audit entry")
			}
			if out.Barcode != "I00010" {
				t.Errorf("outcome barcode %q", out.Barcode)
			}
			if tt.next == "" {
				if out.Next != nil {
					t.Errorf("the copy went to %+v", out.Next)
				}
				return
			}
			if out.Next == nil {
				t.Fatalf("the copy went to no hold, want %s", tt.next)
			}
			if got := out.Next.PatronCard + " " + e.queryString(`SELECT status || ' ' || coalesce(pickup_by, '-') FROM holds WHERE id = ?`, out.Next.HoldID); got != tt.next {
				t.Errorf("next hold %q, want %q", got, tt.next)
			}
		})
	}
}

// TestCheckinExpiredHold: checking in a copy whose hold was not collected by its
// pickup time ends that hold as expired, as the Holds page's Clear does, and passes
// the copy on to the next hold, home, or the shelf, in the checkin's transaction;
// the desk's list says so.
func TestCheckinExpiredHold(t *testing.T) {
	// P0003's hold is trapped at Central on Monday 30 November: it may be collected
	// until closing on Tuesday 8 December (20:00).
	tests := []struct {
		name   string
		now    string
		branch int64              // where the copy is checked in
		setup  func(e *env) int64 // after the trap; the next hold, if any

		expired  bool   // the hold ended
		next     string // "CARD " + holdState of the hold the copy now fills
		transfer string // where the copy is sent home to
		item     string // itemPlace of I00010 afterwards
		notices  int64  // hold_available notices for the next hold
	}{
		{name: "NotYet", now: "2026-12-08 19:59", branch: 1, next: "P0003 waiting 0 I00010 2026-12-08T20:00:00Z", item: "on_hold_shelf 1 -",
			setup: func(e *env) int64 { e.addHold("P0002", "I00010", 1, false); return 0 }},
		{name: "AtPickupBy", now: "2026-12-08 20:00", branch: 1, next: "P0003 waiting 0 I00010 2026-12-08T20:00:00Z", item: "on_hold_shelf 1 -"},
		{name: "Reshelved", now: "2026-12-09 09:00", branch: 1, expired: true, item: "available 1 -"},
		// Seven open days after Wednesday 9 December, Sunday 13th closed: the 17th.
		{name: "NextHold", now: "2026-12-09 09:00", branch: 1, expired: true, next: "P0002 waiting 0 I00010 2026-12-17T20:00:00Z", item: "on_hold_shelf 1 -", notices: 1,
			setup: func(e *env) int64 { return e.addHold("P0002", "I00010", 1, false) }},
		{name: "NextHoldElsewhere", now: "2026-12-09 09:00", branch: 1, expired: true, next: "P0002 in_transit 0 I00010 -", item: "in_transit 1 2",
			setup: func(e *env) int64 { return e.addHold("P0002", "I00010", 2, false) }},
		{name: "NextHoldSuspended", now: "2026-12-09 09:00", branch: 1, expired: true, item: "available 1 -",
			setup: func(e *env) int64 {
				e.exec(`UPDATE holds SET suspended_until = '2026-12-15' WHERE id = ?`, e.addHold("P0002", "I00010", 1, false))
				return 0
			}},
		// Found at Westside past its pickup time: I00010 belongs to Central.
		{name: "AtOtherBranchGoesHome", now: "2026-12-09 09:00", branch: 3, expired: true, transfer: "Central", item: "in_transit 3 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			hold := e.addHold("P0003", "I00010", 1, false)
			if tr := e.trapHere(1, "I00010", dbtest.Monday); !tr.PickupBy.Equal(at("2026-12-08 20:00")) {
				t.Fatalf("pickup by %s", tr.PickupBy)
			}
			next := int64(0)
			if tt.setup != nil {
				next = tt.setup(e)
			}
			e.clock.Set(at(tt.now))
			res, err := e.checkinAt(tt.branch, "I00010", "desk-1")
			if err != nil {
				t.Fatal(err)
			}
			if got := e.itemPlace("I00010"); got != tt.item {
				t.Errorf("item %q, want %q", got, tt.item)
			}
			if !tt.expired {
				if res.ExpiredHold != nil {
					t.Errorf("ended %+v before its pickup time", res.ExpiredHold)
				}
				if res.Hold == nil || res.Hold.HoldID != hold || "P0003 "+e.holdState(hold) != tt.next {
					t.Errorf("hold %+v %q, want still %s", res.Hold, e.holdState(hold), tt.next)
				}
				if e.auditCount("hold.expired") != 0 {
					t.Error("a hold.expired audit entry")
				}
				return
			}
			if got := e.queryString(`SELECT status || '|' || closed_at || '|' || cancel_reason FROM holds WHERE id = ?`, hold); got !=
				"expired|"+db.FormatTime(at(tt.now))+"|not collected in time" {
				t.Errorf("hold %q", got)
			}
			if e.auditCount("hold.expired") != 1 {
				t.Error("no hold.expired audit entry")
			}
			x := res.ExpiredHold
			if x == nil || x.HoldID != hold || x.PatronCard != "P0003" || x.PatronName != "Casey Waiting" || !x.PickupBy.Equal(at("2026-12-08 20:00")) {
				t.Errorf("expired %+v", x)
			}
			if got := e.queryInt(`SELECT coalesce(expired_hold_id, 0) FROM checkins WHERE id = ?`, res.ID); got != hold {
				t.Errorf("checkin records expired hold %d, want %d", got, hold)
			}
			switch {
			case tt.next == "" && res.Hold != nil:
				t.Errorf("the copy went to %+v", res.Hold)
			case tt.next == "":
			case res.Hold == nil || res.Hold.HoldID != next || res.Hold.PatronCard+" "+e.holdState(next) != tt.next:
				t.Errorf("next %+v %q, want %s", res.Hold, e.holdState(next), tt.next)
			}
			if n := e.queryInt(`SELECT count(*) FROM notice_items WHERE trigger = 'hold_available' AND object_id = ?`, next); n != tt.notices {
				t.Errorf("%d hold_available notices for the next hold, want %d", n, tt.notices)
			}
			switch {
			case tt.transfer == "" && res.TransferTo != nil:
				t.Errorf("transfer %+v", res.TransferTo)
			case tt.transfer != "" && (res.TransferTo == nil || res.TransferTo.Name != tt.transfer):
				t.Errorf("transfer %+v, want %s", res.TransferTo, tt.transfer)
			}
			// The desk's list reads the same back.
			var list []circulation.CheckinResult
			err = e.d.Read(context.Background(), func(tx *db.Tx) error {
				list, err = circulation.CheckinBatch(tx, "desk-1", 10)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(list) == 0 || list[0].ID != res.ID || list[0].ExpiredHold == nil || list[0].ExpiredHold.PatronName != "Casey Waiting" ||
				!list[0].ExpiredHold.PickupBy.Equal(at("2026-12-08 20:00")) || (list[0].Hold == nil) != (res.Hold == nil) {
				t.Errorf("desk list %+v", list)
			}
		})
	}
}

// TestCheckoutFillsHold: lending a copy to a patron who holds its title fills
// that hold, and the queue behind closes up.
func TestCheckoutFillsHold(t *testing.T) {
	tests := []struct {
		name    string
		queue   []string // cards queued on I00010's title, before any trap
		waiting bool     // check I00010 in first, so it waits for the first hold
		confirm []string
		want    string // the queue afterwards
	}{
		{name: "Waiting", queue: []string{"P0003", "P0002", "P0004"}, waiting: true, want: "P0002:queued:1 P0004:queued:2"},
		{name: "WaitingAlone", queue: []string{"P0003"}, waiting: true, want: ""},
		{name: "QueuedFirst", queue: []string{"P0003", "P0002", "P0004"}, want: "P0002:queued:1 P0004:queued:2"},
		{name: "QueuedMiddle", queue: []string{"P0002", "P0003", "P0004"}, confirm: []string{circulation.BlockOnHold},
			want: "P0002:queued:1 P0004:queued:2"},
		{name: "QueuedLast", queue: []string{"P0002", "P0004", "P0003"}, confirm: []string{circulation.BlockOnHold},
			want: "P0002:queued:1 P0004:queued:2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			var own int64
			for _, card := range tt.queue {
				hid := e.addHold(card, "I00010", 1, false)
				if card == "P0003" {
					own = hid
				}
			}
			if tt.waiting {
				if tr := e.trapHere(1, "I00010", dbtest.Monday); tr.HoldID != own {
					t.Fatalf("trapped %+v, want P0003's hold", tr)
				}
			}
			res, err := e.checkout("P0003", "I00010", tt.confirm...)
			if err != nil {
				t.Fatal(err)
			}
			if res.FilledHold != own {
				t.Errorf("filled hold %d, want %d", res.FilledHold, own)
			}
			if got := e.queryString(`SELECT status || ' ' || coalesce(CAST(trapped_item_id AS TEXT), '-') || ' ' || closed_at FROM holds WHERE id = ?`, own); got != "fulfilled - 2026-11-30T10:00:00Z" {
				t.Errorf("own hold %q", got)
			}
			if got := e.queue("I00010"); got != tt.want {
				t.Errorf("queue %q, want %q", got, tt.want)
			}
			if got := e.itemPlace("I00010"); got != "on_loan 1 -" {
				t.Errorf("item %q", got)
			}
			var mine []holds.Hold
			err = e.d.Read(context.Background(), func(tx *db.Tx) error {
				var err error
				mine, err = holds.PatronHolds(tx, e.patronID("P0003"))
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(mine) != 0 {
				t.Errorf("P0003 still has holds %+v", mine)
			}
			if e.auditCount("hold.fill") != 1 {
				t.Error("no hold.fill audit entry")
			}
		})
	}
}
