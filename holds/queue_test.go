package holds_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/dbtest"
	"github.com/stacks-ils/stacks/holds"
)

// read runs fn in a read transaction and fails the test on error.
func read[T any](tb testing.TB, d *db.DB, fn func(tx *db.Tx) (T, error)) T {
	tb.Helper()
	var v T
	err := d.Read(context.Background(), func(tx *db.Tx) error {
		var err error
		v, err = fn(tx)
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
	return v
}

// write runs fn in a write transaction and returns its error.
func write(d *db.DB, fn func(tx *db.Tx) error) error {
	return d.Write(context.Background(), fn)
}

// recordQueue returns the open holds of I00001's title.
func recordQueue(tb testing.TB, d *db.DB) []holds.Hold {
	tb.Helper()
	rec := item(tb, d, "I00001").RecordID
	return read(tb, d, func(tx *db.Tx) ([]holds.Hold, error) { return holds.RecordQueue(tx, rec) })
}

// queueCards describes a record queue as "CARD:status:priority" in its order.
func queueCards(hs []holds.Hold) string {
	s := make([]string, len(hs))
	for i, h := range hs {
		s[i] = fmt.Sprintf("%s:%s:%d", h.PatronCard, h.Status, h.Priority)
	}
	return strings.Join(s, " ")
}

// fixedDeadline is a PickupDeadline for holds tests: closing a week on.
func fixedDeadline(int64, int64) (time.Time, error) {
	return time.Date(2026, 12, 7, 20, 0, 0, 0, time.UTC), nil
}

// trapAt checks barcode in at Central on day and returns the hold it was trapped for.
func trapAt(tb testing.TB, d *db.DB, barcode string, day time.Time) *holds.Trap {
	tb.Helper()
	it := item(tb, d, barcode)
	var tr *holds.Trap
	err := write(d, func(tx *db.Tx) error {
		var err error
		tr, err = holds.TrapAtCheckin(tx, desk, it, 1, day, fixedDeadline)
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
	return tr
}

func TestQueueOrder(t *testing.T) {
	d := mustOpenDB(t)
	rec := item(t, d, "I00001").RecordID
	cards := []string{"P0002", "P0003", "P0001"}
	var ids []int64
	for i, card := range cards {
		// A minute apart, so that placed_at tells them apart.
		d.Now = func() time.Time { return dbtest.Monday.Add(time.Duration(i) * time.Minute) }
		p, err := place(t, d, holds.PlaceRequest{Actor: desk, RecordID: rec, PatronCard: card, PickupBranchCode: "CEN"})
		if err != nil {
			t.Fatal(err)
		}
		if p.Position != i+1 {
			t.Errorf("%s placed at %d, want %d", card, p.Position, i+1)
		}
		ids = append(ids, p.HoldID)
	}
	d.Now = func() time.Time { return dbtest.Monday }

	t.Run("RecordQueue", func(t *testing.T) {
		q := recordQueue(t, d)
		if got := queueCards(q); got != "P0002:queued:1 P0003:queued:2 P0001:queued:3" {
			t.Fatalf("queue %s", got)
		}
		h := q[1]
		if h.ID != ids[1] || h.RecordID != rec || h.Title == "" || h.PatronName != "Casey Waiting" || h.PickupBranchName != "Central" ||
			h.PickupBranchID != 1 || !h.PlacedAt.Equal(dbtest.Monday.Add(time.Minute)) || h.ItemID != 0 || h.SuspendedUntil != "" || !h.PickupBy.IsZero() {
			t.Errorf("hold %+v", h)
		}
	})

	t.Run("TrappedFirst", func(t *testing.T) {
		d := mustOpenDB(t)
		exec(t, d, `UPDATE items SET status = 'on_hold_shelf' WHERE barcode = 'I00001B'`)
		addHolds(t, d, hold{card: "P0001"}, hold{card: "P0002"}, hold{card: "P0003", status: "waiting", trapped: "I00001B"})
		q := recordQueue(t, d)
		if got := queueCards(q); got != "P0003:waiting:0 P0001:queued:1 P0002:queued:2" {
			t.Fatalf("queue %s", got)
		}
		if q[0].TrappedBarcode != "I00001B" {
			t.Errorf("trapped %q", q[0].TrappedBarcode)
		}
	})

	t.Run("PatronHolds", func(t *testing.T) {
		d := mustOpenDB(t)
		// P0003: a queued hold on I00002's title, then a waiting one on I00001's.
		otherHolds(t, d, "P0003", 1)
		exec(t, d, `UPDATE items SET status = 'on_hold_shelf' WHERE barcode = 'I00001'`)
		addHolds(t, d, hold{card: "P0001"}, hold{card: "P0003", status: "waiting", trapped: "I00001"})
		exec(t, d, `INSERT INTO holds (record_id, patron_id, pickup_branch_id, placed_at, priority, status, closed_at)
			SELECT record_id, ?, 1, ?, 0, 'fulfilled', ? FROM items WHERE barcode = 'I00003'`, patron(t, d, "P0003"), db.FormatTime(dbtest.Monday), db.FormatTime(dbtest.Monday))
		hs := read(t, d, func(tx *db.Tx) ([]holds.Hold, error) { return holds.PatronHolds(tx, patron(t, d, "P0003")) })
		var got []string
		for _, h := range hs {
			got = append(got, h.Status+":"+h.TrappedBarcode)
		}
		if strings.Join(got, " ") != "waiting:I00001 queued:" {
			t.Errorf("patron holds %v, want the waiting one first and no closed hold", got)
		}
	})

	t.Run("FindHold", func(t *testing.T) {
		h := read(t, d, func(tx *db.Tx) (holds.Hold, error) { return holds.FindHold(tx, ids[2]) })
		if h.PatronCard != "P0001" || h.Priority != 3 {
			t.Errorf("hold %+v", h)
		}
		err := d.Read(context.Background(), func(tx *db.Tx) error { _, err := holds.FindHold(tx, 999999); return err })
		if stacks.ErrorCode(err) != stacks.ENOTFOUND {
			t.Errorf("err = %v, want not found", err)
		}
	})
}

func TestMove(t *testing.T) {
	// The queue is A B C (P0001, P0002, P0003), behind a copy waiting for P0004.
	tests := []struct {
		name string
		hold int // index in A B C
		to   int
		want string // cards in queue order
	}{
		{"ToTop", 2, 1, "P0003 P0001 P0002"},
		{"ToBottom", 0, 3, "P0002 P0003 P0001"},
		{"MiddleUp", 2, 2, "P0001 P0003 P0002"},
		{"MiddleDown", 0, 2, "P0002 P0001 P0003"},
		{"SamePlace", 1, 2, "P0001 P0002 P0003"},
		{"BeyondTheEnd", 0, 9, "P0002 P0003 P0001"},
		{"BeforeTheStart", 2, 0, "P0003 P0001 P0002"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := mustOpenDB(t)
			exec(t, d, `UPDATE items SET status = 'on_hold_shelf' WHERE barcode = 'I00001B'`)
			ids := addHolds(t, d, hold{card: "P0004", status: "waiting", trapped: "I00001B"}, hold{card: "P0001"}, hold{card: "P0002"}, hold{card: "P0003"})[1:]
			if err := write(d, func(tx *db.Tx) error { return holds.Move(tx, desk, ids[tt.hold], tt.to) }); err != nil {
				t.Fatal(err)
			}
			q := recordQueue(t, d)
			var cards []string
			for i, h := range q[1:] {
				cards = append(cards, h.PatronCard)
				if h.Priority != i+1 {
					t.Errorf("%s at priority %d, want %d", h.PatronCard, h.Priority, i+1)
				}
			}
			if got := strings.Join(cards, " "); got != tt.want {
				t.Errorf("queue %s, want %s", got, tt.want)
			}
			if q[0].Status != holds.StatusWaiting || q[0].Priority != 0 {
				t.Errorf("the waiting hold moved: %+v", q[0])
			}
			audits := id(t, d, `SELECT count(*) FROM audit_log WHERE action = 'hold.move' AND object_id = ?`, ids[tt.hold])
			if moved := tt.want != "P0001 P0002 P0003"; (audits == 1) != moved {
				t.Errorf("%d hold.move audit entries", audits)
			}
		})
	}

	t.Run("ErrWaiting", func(t *testing.T) {
		d := mustOpenDB(t)
		exec(t, d, `UPDATE items SET status = 'on_hold_shelf' WHERE barcode = 'I00001B'`)
		ids := addHolds(t, d, hold{card: "P0004", status: "waiting", trapped: "I00001B"}, hold{card: "P0001"})
		err := write(d, func(tx *db.Tx) error { return holds.Move(tx, desk, ids[0], 2) })
		if stacks.ErrorCode(err) != stacks.ECONFLICT || !strings.Contains(stacks.ErrorMessage(err), "Waiting for pickup") {
			t.Fatalf("err = %v, want a conflict naming the status", err)
		}
		if got := queueCards(recordQueue(t, d)); got != "P0004:waiting:0 P0001:queued:1" {
			t.Errorf("queue %s", got)
		}
	})

	t.Run("ErrClosed", func(t *testing.T) {
		d := mustOpenDB(t)
		ids := addHolds(t, d, hold{card: "P0001"}, hold{card: "P0002"})
		exec(t, d, `UPDATE holds SET status = 'cancelled' WHERE id = ?`, ids[0])
		err := write(d, func(tx *db.Tx) error { return holds.Move(tx, desk, ids[0], 2) })
		if stacks.ErrorCode(err) != stacks.ECONFLICT {
			t.Fatalf("err = %v, want conflict", err)
		}
	})

	t.Run("ErrUnknown", func(t *testing.T) {
		d := mustOpenDB(t)
		err := write(d, func(tx *db.Tx) error { return holds.Move(tx, desk, 999999, 1) })
		if stacks.ErrorCode(err) != stacks.ENOTFOUND {
			t.Fatalf("err = %v, want not found", err)
		}
	})
}

func TestSuspend(t *testing.T) {
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		until string
		today time.Time
		code  string // "" for suspended
	}{
		{"OK", "2026-12-15", today, ""},
		{"OKTomorrow", "2026-12-01", today, ""},
		{"ErrToday", "2026-11-30", today, stacks.EINVALID},
		{"ErrPast", "2026-11-01", today, stacks.EINVALID},
		{"ErrFormat", "15/12/2026", today, stacks.EINVALID},
		{"ErrEmpty", "", today, stacks.EINVALID},
		{"ErrNoSuchDay", "2026-02-30", today, stacks.EINVALID},
		// A library east of UTC: today is 30 November there, and starts at
		// 2026-11-29T23:00Z. Suspending "until today" is still no suspension.
		{"ErrTodayInLibraryTimeZone", "2026-11-30", time.Date(2026, 11, 30, 0, 0, 0, 0, paris), stacks.EINVALID},
		{"OKTomorrowInLibraryTimeZone", "2026-12-01", time.Date(2026, 11, 30, 0, 0, 0, 0, paris), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := mustOpenDB(t)
			ids := addHolds(t, d, hold{card: "P0003"})
			err := write(d, func(tx *db.Tx) error { return holds.Suspend(tx, desk, ids[0], tt.until, tt.today) })
			got := queryString(t, d, `SELECT coalesce(suspended_until, '-') FROM holds WHERE id = ?`, ids[0])
			if tt.code != "" {
				if stacks.ErrorCode(err) != tt.code || stacks.ErrorField(err) != "until" {
					t.Fatalf("err = %v (field %q), want %s about until", err, stacks.ErrorField(err), tt.code)
				}
				if got != "-" {
					t.Errorf("suspended until %s after a refusal", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.until {
				t.Errorf("suspended until %s, want %s", got, tt.until)
			}
			if detail := queryString(t, d, `SELECT detail FROM audit_log WHERE action = 'hold.suspend' AND object_id = ?`, ids[0]); detail != "until "+tt.until {
				t.Errorf("audit %q", detail)
			}
			h := read(t, d, func(tx *db.Tx) (holds.Hold, error) { return holds.FindHold(tx, ids[0]) })
			if h.SuspendedUntil != tt.until || h.Priority != 1 || h.Status != holds.StatusQueued {
				t.Errorf("hold %+v", h)
			}
			if !h.Suspended("2026-11-30") || h.Suspended(tt.until) {
				t.Errorf("Suspended: today %v, on %s %v", h.Suspended("2026-11-30"), tt.until, h.Suspended(tt.until))
			}
		})
	}

	t.Run("ErrWaiting", func(t *testing.T) {
		d := mustOpenDB(t)
		exec(t, d, `UPDATE items SET status = 'on_hold_shelf' WHERE barcode = 'I00001'`)
		ids := addHolds(t, d, hold{card: "P0003", status: "waiting", trapped: "I00001"})
		err := write(d, func(tx *db.Tx) error { return holds.Suspend(tx, desk, ids[0], "2026-12-15", today) })
		if stacks.ErrorCode(err) != stacks.ECONFLICT {
			t.Fatalf("err = %v, want conflict", err)
		}
	})

	// Suspended, the first hold is passed over: the copy goes to the next. Resumed,
	// it is first again; a suspension whose day has come no longer counts.
	t.Run("TrapSkipsSuspended", func(t *testing.T) {
		for _, tc := range []struct {
			name   string
			resume bool
			day    time.Time
			want   int // index of the hold trapped
		}{
			{"Suspended", false, today, 1},
			{"SuspendedDayBefore", false, time.Date(2026, 12, 14, 0, 0, 0, 0, time.UTC), 1},
			{"Resumed", true, today, 0},
			{"SuspensionDayCame", false, time.Date(2026, 12, 15, 0, 0, 0, 0, time.UTC), 0},
			{"SuspensionOver", false, time.Date(2026, 12, 20, 0, 0, 0, 0, time.UTC), 0},
		} {
			t.Run(tc.name, func(t *testing.T) {
				d := mustOpenDB(t)
				ids := addHolds(t, d, hold{card: "P0003"}, hold{card: "P0002"})
				if err := write(d, func(tx *db.Tx) error { return holds.Suspend(tx, desk, ids[0], "2026-12-15", today) }); err != nil {
					t.Fatal(err)
				}
				if tc.resume {
					if err := write(d, func(tx *db.Tx) error { return holds.Resume(tx, desk, ids[0]) }); err != nil {
						t.Fatal(err)
					}
					if got := queryString(t, d, `SELECT coalesce(suspended_until, '-') FROM holds WHERE id = ?`, ids[0]); got != "-" {
						t.Errorf("resumed hold suspended until %s", got)
					}
					if id(t, d, `SELECT count(*) FROM audit_log WHERE action = 'hold.resume' AND object_id = ?`, ids[0]) != 1 {
						t.Error("no hold.resume audit entry")
					}
				}
				tr := trapAt(t, d, "I00001", tc.day)
				if tr == nil || tr.HoldID != ids[tc.want] {
					t.Fatalf("trapped %+v, want hold %d", tr, ids[tc.want])
				}
				// The hold left in the queue is first, and the suspended one kept its place.
				if got := queueOf(t, d, item(t, d, "I00001").RecordID); got != "1" {
					t.Errorf("queue %s, want 1", got)
				}
			})
		}
	})

	t.Run("ErrResumeWaiting", func(t *testing.T) {
		d := mustOpenDB(t)
		exec(t, d, `UPDATE items SET status = 'on_hold_shelf' WHERE barcode = 'I00001'`)
		ids := addHolds(t, d, hold{card: "P0003", status: "waiting", trapped: "I00001"})
		err := write(d, func(tx *db.Tx) error { return holds.Resume(tx, desk, ids[0]) })
		if stacks.ErrorCode(err) != stacks.ECONFLICT {
			t.Fatalf("err = %v, want conflict", err)
		}
	})
}

func TestClose(t *testing.T) {
	tests := []struct {
		name   string
		holds  []hold
		close  int // index of the hold closed
		status string
		reason string

		code  string // stacks error code, "" for closed
		freed string // barcode of the copy freed
		queue string // queued cards in order afterwards
	}{
		{name: "CancelFirst", holds: []hold{{card: "P0001"}, {card: "P0002"}, {card: "P0003"}}, close: 0,
			status: holds.StatusCancelled, reason: "patron asked", queue: "P0002 P0003"},
		{name: "CancelMiddle", holds: []hold{{card: "P0001"}, {card: "P0002"}, {card: "P0003"}}, close: 1,
			status: holds.StatusCancelled, reason: "patron asked", queue: "P0001 P0003"},
		{name: "CancelLast", holds: []hold{{card: "P0001"}, {card: "P0002"}, {card: "P0003"}}, close: 2,
			status: holds.StatusCancelled, reason: "patron asked", queue: "P0001 P0002"},
		{name: "CancelSuspended", holds: []hold{{card: "P0001", suspended: "2026-12-15"}, {card: "P0002"}}, close: 0,
			status: holds.StatusCancelled, reason: "patron moved away", queue: "P0002"},
		{name: "CancelWaiting", holds: []hold{{card: "P0001", status: "waiting", trapped: "I00001"}, {card: "P0002"}, {card: "P0003"}}, close: 0,
			status: holds.StatusCancelled, reason: "patron asked", freed: "I00001", queue: "P0002 P0003"},
		{name: "CancelInTransit", holds: []hold{{card: "P0001", status: "in_transit", trapped: "I00001", pickup: 2}, {card: "P0002"}}, close: 0,
			status: holds.StatusCancelled, reason: "patron asked", freed: "I00001", queue: "P0002"},
		{name: "ExpireWaiting", holds: []hold{{card: "P0001", status: "waiting", trapped: "I00001"}, {card: "P0002"}}, close: 0,
			status: holds.StatusExpired, freed: "I00001", queue: "P0002"},
		{name: "ErrCancelWithoutReason", holds: []hold{{card: "P0001"}, {card: "P0002"}}, close: 0,
			status: holds.StatusCancelled, code: stacks.EINVALID, queue: "P0001 P0002"},
		{name: "ErrBadStatus", holds: []hold{{card: "P0001"}, {card: "P0002"}}, close: 0,
			status: holds.StatusFulfilled, reason: "collected", code: stacks.EINTERNAL, queue: "P0001 P0002"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := mustOpenDB(t)
			ids := addHolds(t, d, tt.holds...)
			var freed int64
			err := write(d, func(tx *db.Tx) error {
				var err error
				freed, err = holds.Close(tx, desk, ids[tt.close], tt.status, tt.reason)
				return err
			})
			if got := queuedCards(t, d); got != tt.queue {
				t.Errorf("queue %q, want %q", got, tt.queue)
			}
			if tt.code != "" {
				if stacks.ErrorCode(err) != tt.code {
					t.Fatalf("err = %v, want code %s", err, tt.code)
				}
				if tt.code == stacks.EINVALID && stacks.ErrorField(err) != "reason" {
					t.Errorf("error about %q, want reason", stacks.ErrorField(err))
				}
				want := tt.holds[tt.close].status
				if want == "" {
					want = holds.StatusQueued
				}
				if got := queryString(t, d, `SELECT status FROM holds WHERE id = ?`, ids[tt.close]); got != want {
					t.Errorf("hold %s after a refusal", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var wantFreed int64
			if tt.freed != "" {
				wantFreed = item(t, d, tt.freed).ID
			}
			if freed != wantFreed {
				t.Errorf("freed item %d, want %d (%s)", freed, wantFreed, tt.freed)
			}
			if got := queryString(t, d, `SELECT status || '|' || closed_at || '|' || cancel_reason FROM holds WHERE id = ?`, ids[tt.close]); got != tt.status+"|2026-11-30T10:00:00Z|"+tt.reason {
				t.Errorf("closed hold %q", got)
			}
			if detail := queryString(t, d, `SELECT detail FROM audit_log WHERE action = ? AND object_id = ?`, "hold."+tt.status, ids[tt.close]); detail != tt.reason {
				t.Errorf("audit detail %q, want %q", detail, tt.reason)
			}
			// Closed, it is off the record's queue and the patron's list.
			for _, h := range recordQueue(t, d) {
				if h.ID == ids[tt.close] {
					t.Errorf("closed hold still in the queue: %+v", h)
				}
			}
			if hs := read(t, d, func(tx *db.Tx) ([]holds.Hold, error) {
				return holds.PatronHolds(tx, patron(t, d, tt.holds[tt.close].card))
			}); len(hs) != 0 {
				t.Errorf("patron still has %d open holds", len(hs))
			}

			t.Run("ErrAlreadyClosed", func(t *testing.T) {
				err := write(d, func(tx *db.Tx) error {
					_, err := holds.Close(tx, desk, ids[tt.close], holds.StatusCancelled, "again")
					return err
				})
				if stacks.ErrorCode(err) != stacks.ECONFLICT {
					t.Fatalf("err = %v, want conflict", err)
				}
			})
		})
	}
}

// queuedCards lists the cards of I00001's title's queued holds in queue order, and
// checks they are numbered 1..n.
func queuedCards(tb testing.TB, d *db.DB) string {
	tb.Helper()
	var cards []string
	n := 0
	for _, h := range recordQueue(tb, d) {
		if h.Status != holds.StatusQueued {
			continue
		}
		n++
		if h.Priority != n {
			tb.Errorf("%s at priority %d, want %d", h.PatronCard, h.Priority, n)
		}
		cards = append(cards, h.PatronCard)
	}
	return strings.Join(cards, " ")
}

func TestHoldShelf(t *testing.T) {
	d := mustOpenDB(t)
	rec := item(t, d, "I00001").RecordID
	// Copies of I00001's title for each hold.
	for _, b := range []string{"I00001C", "I00001D", "I00001E", "I00001F"} {
		exec(t, d, `INSERT INTO items (barcode, record_id, home_branch_id, current_branch_id, item_type_id, status, created_at, updated_at)
			SELECT ?, record_id, 1, 1, item_type_id, 'on_hold_shelf', created_at, updated_at FROM items WHERE barcode = 'I00001'`, b)
	}
	ids := addHolds(t, d,
		hold{card: "P0001", status: "waiting", trapped: "I00001C"},
		hold{card: "P0002", status: "waiting", trapped: "I00001D"},
		hold{card: "P0003", status: "waiting", trapped: "I00001E", pickup: 2}, // at Eastside
		hold{card: "P0004", status: "in_transit", trapped: "I00001F"},         // not there yet
		hold{card: "P0005"}, // queued
	)
	exec(t, d, `UPDATE holds SET waiting_since = ?, pickup_by = '2026-12-09T20:00:00Z' WHERE id = ?`, db.FormatTime(dbtest.Monday), ids[0])
	exec(t, d, `UPDATE holds SET waiting_since = ?, pickup_by = '2026-12-07T20:00:00Z' WHERE id = ?`, db.FormatTime(dbtest.Monday), ids[1])
	exec(t, d, `UPDATE holds SET waiting_since = ?, pickup_by = '2026-12-01T20:00:00Z' WHERE id = ?`, db.FormatTime(dbtest.Monday), ids[2])

	for _, tt := range []struct {
		name   string
		branch int64
		want   string
	}{
		{"Central", 1, "P0002:I00001D:2026-12-07 P0001:I00001C:2026-12-09"},
		{"Eastside", 2, "P0003:I00001E:2026-12-01"},
		{"Westside", 3, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			shelf := read(t, d, func(tx *db.Tx) ([]holds.Hold, error) { return holds.HoldShelf(tx, tt.branch) })
			var got []string
			for _, h := range shelf {
				if h.RecordID != rec {
					continue // the demo library's own holds
				}
				if h.Status != holds.StatusWaiting || h.PickupBranchID != tt.branch || h.WaitingSince.IsZero() || h.Title == "" {
					t.Errorf("on the shelf: %+v", h)
				}
				got = append(got, h.PatronCard+":"+h.TrappedBarcode+":"+h.PickupBy.Format("2006-01-02"))
			}
			if strings.Join(got, " ") != tt.want {
				t.Errorf("hold shelf %v, want %s", got, tt.want)
			}
			// The whole shelf is in pickup_by order.
			if !slices.IsSortedFunc(shelf, func(a, b holds.Hold) int { return a.PickupBy.Compare(b.PickupBy) }) {
				t.Error("hold shelf not by pickup deadline")
			}
		})
	}
}

func TestPullList(t *testing.T) {
	// Central has I00001 (and, when a case adds them, I00001C and I00001D) of the
	// title; Eastside has I00001B.
	tests := []struct {
		name   string
		setup  string   // SQL run before the holds are added
		copies []string // more copies at Central
		holds  []hold
		branch int64
		want   []string // "index of hold:barcode", oldest hold first
	}{
		{name: "NoHolds", branch: 1},
		{name: "OneHold", holds: []hold{{card: "P0003"}}, branch: 1, want: []string{"0:I00001"}},
		{name: "PickupElsewhereStillPulledHere", holds: []hold{{card: "P0003", pickup: 3}}, branch: 1, want: []string{"0:I00001"}},
		// Central, the pickup branch, has a copy: Eastside is not asked for its own.
		{name: "OtherBranchNotAskedToo", holds: []hold{{card: "P0003"}}, branch: 2},
		{name: "OtherBranchWhenPickupHasNone", setup: `UPDATE items SET status = 'on_loan' WHERE barcode = 'I00001'`,
			holds: []hold{{card: "P0003"}}, branch: 2, want: []string{"0:I00001B"}},
		{name: "PickupBranchFirst", holds: []hold{{card: "P0003", pickup: 2}}, branch: 2, want: []string{"0:I00001B"}},
		{name: "PickupBranchFirstNotAskedElsewhere", holds: []hold{{card: "P0003", pickup: 2}}, branch: 1},
		// The second hold takes the copy the first one was not given: at Eastside.
		{name: "SecondHoldAtOtherBranch", holds: []hold{{card: "P0003"}, {card: "P0002"}}, branch: 2, want: []string{"1:I00001B"}},
		{name: "TwoHoldsTwoCopies", copies: []string{"I00001C"}, holds: []hold{{card: "P0003"}, {card: "P0002"}}, branch: 1,
			want: []string{"0:I00001", "1:I00001C"}},
		{name: "MoreHoldsThanCopies", holds: []hold{{card: "P0003"}, {card: "P0002"}, {card: "P0001"}}, branch: 1, want: []string{"0:I00001"}},
		{name: "SuspendedSkipped", holds: []hold{{card: "P0003", suspended: "2026-12-15"}, {card: "P0002"}}, branch: 1, want: []string{"1:I00001"}},
		{name: "OnlySuspended", holds: []hold{{card: "P0003", suspended: "2026-12-15"}}, branch: 1},
		{name: "SuspensionOver", holds: []hold{{card: "P0003", suspended: "2026-11-30"}}, branch: 1, want: []string{"0:I00001"}},
		{name: "ReferenceCopyNotPulled", setup: `UPDATE items SET item_type_id = 3 WHERE barcode = 'I00001'`,
			holds: []hold{{card: "P0003"}}, branch: 1},
		{name: "CopyOnLoanNotPulled", setup: `UPDATE items SET status = 'on_loan' WHERE barcode = 'I00001'`,
			holds: []hold{{card: "P0003"}}, branch: 1},
		{name: "CopyInTransitNotPulled", setup: `UPDATE items SET status = 'in_transit', transit_to_id = 2 WHERE barcode = 'I00001'`,
			holds: []hold{{card: "P0003"}}, branch: 1},
		{name: "TrappedHoldNotPulled", copies: []string{"I00001C"},
			setup: `UPDATE items SET status = 'on_hold_shelf' WHERE barcode = 'I00001'`,
			holds: []hold{{card: "P0001", status: "waiting", trapped: "I00001"}, {card: "P0003"}}, branch: 1, want: []string{"1:I00001C"}},
		{name: "ItemLevelOnlyItsCopy", copies: []string{"I00001C"}, holds: []hold{{card: "P0003", itemLevel: "I00001C"}}, branch: 1,
			want: []string{"0:I00001C"}},
		{name: "ItemLevelCopyElsewhere", holds: []hold{{card: "P0003", itemLevel: "I00001B"}}, branch: 1},
		{name: "ItemLevelCopyElsewhereThenRecordLevel", holds: []hold{{card: "P0003", itemLevel: "I00001B"}, {card: "P0002"}}, branch: 1,
			want: []string{"1:I00001"}},
		{name: "ItemLevelCopyOnLoanThenRecordLevel", copies: []string{"I00001C"},
			setup: `UPDATE items SET status = 'on_loan' WHERE barcode = 'I00001C'`,
			holds: []hold{{card: "P0003", itemLevel: "I00001C"}, {card: "P0002"}}, branch: 1, want: []string{"1:I00001"}},
		// One copy, wanted by a record-level hold and, behind it, an item-level hold
		// on that very copy: one row, the hold a checkin of the copy would trap (the
		// item-level one), never the same copy twice.
		{name: "OneCopyTwoHoldsWantingIt", holds: []hold{{card: "P0003"}, {card: "P0002", itemLevel: "I00001"}}, branch: 1,
			want: []string{"1:I00001"}},
		{name: "ItemLevelAndRecordLevelDistinctCopies", copies: []string{"I00001C"},
			holds: []hold{{card: "P0003"}, {card: "P0002", itemLevel: "I00001"}}, branch: 1, want: []string{"0:I00001C", "1:I00001"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := mustOpenDB(t)
			rec := item(t, d, "I00001").RecordID
			for _, b := range tt.copies {
				exec(t, d, `INSERT INTO items (barcode, record_id, home_branch_id, current_branch_id, item_type_id, call_number, status, created_at, updated_at)
					SELECT ?, record_id, 1, 1, item_type_id, call_number, 'available', created_at, updated_at FROM items WHERE barcode = 'I00001'`, b)
			}
			if tt.setup != "" {
				exec(t, d, tt.setup)
			}
			ids := addHolds(t, d, tt.holds...)
			ctx, stats := db.WithStats(context.Background())
			var list []holds.PullItem
			err := d.Read(ctx, func(tx *db.Tx) error {
				var err error
				list, err = holds.PullList(tx, tt.branch, today)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if n := stats.Statements(); n > 2 {
				t.Errorf("%d statements, want at most 2", n)
			}
			var got []string
			seen := map[string]bool{}
			for _, p := range list {
				if seen[p.Barcode] {
					t.Errorf("copy %s pulled twice", p.Barcode)
				}
				seen[p.Barcode] = true
				if p.RecordID != rec {
					continue // the demo library's own holds
				}
				n := slices.Index(ids, p.HoldID)
				got = append(got, fmt.Sprintf("%d:%s", n, p.Barcode))
				h := tt.holds[n]
				if p.PatronName != read(t, d, func(tx *db.Tx) (string, error) {
					var s string
					return s, tx.QueryRow(`SELECT first_name || ' ' || surname FROM patrons WHERE card = ?`, h.card).Scan(&s)
				}) || p.Title == "" || p.PickupName == "" || p.PlacedAt.IsZero() {
					t.Errorf("row %+v", p)
				}
			}
			if strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Errorf("pull list %v, want %v", got, tt.want)
			}
			// Holds counts the record's active holds: queued, not suspended today.
			active := 0
			for _, h := range tt.holds {
				if h.status == "" && h.suspended <= "2026-11-30" {
					active++
				}
			}
			for _, p := range list {
				if p.RecordID == rec && p.Holds != active {
					t.Errorf("row for hold %d says %d holds, want %d", p.HoldID, p.Holds, active)
				}
			}
		})
	}
}

// TestPullListOneBranchAtATime: a hold whose title has a copy on the shelf at
// Central and at Eastside is asked of one branch at a time, the pickup branch
// first, each for PullAskDays days, then the other; a copy staff mark missing
// ("Not on shelf") leaves the next branch asked at once.
func TestPullListOneBranchAtATime(t *testing.T) {
	// The hold is placed on Monday 30 November (dbtest.Monday), pickup at Central.
	tests := []struct {
		name    string
		today   time.Time
		missing string // barcode of a copy marked missing
		central string // the barcode asked of Central, "" none
		eastern string // the barcode asked of Eastside, "" none
		until   string // the day the branch asked is asked until
	}{
		{name: "FirstDayPickupBranch", today: today, central: "I00001", until: "2026-12-01"},
		{name: "SecondDayPickupBranch", today: today.AddDate(0, 0, 1), central: "I00001", until: "2026-12-01"},
		{name: "ThenTheOtherBranch", today: today.AddDate(0, 0, 2), eastern: "I00001B", until: "2026-12-03"},
		{name: "ThenRoundAgain", today: today.AddDate(0, 0, 4), central: "I00001", until: "2026-12-05"},
		{name: "NotOnShelfAtPickupBranch", today: today, missing: "I00001", eastern: "I00001B"},
		{name: "NotOnShelfAtOtherBranch", today: today.AddDate(0, 0, 2), missing: "I00001B", central: "I00001"},
		// The library's day, not UTC's: 23:30 on the 1st in New York is the 2nd in UTC.
		{name: "LibraryTimeZone", today: time.Date(2026, 12, 1, 23, 30, 0, 0, mustLoc(t, "America/New_York")), central: "I00001", until: "2026-12-01"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := mustOpenDB(t)
			ids := addHolds(t, d, hold{card: "P0003"})
			if tt.missing != "" {
				exec(t, d, `UPDATE items SET status = 'missing' WHERE barcode = ?`, tt.missing)
			}
			asked := map[int64]string{}
			for _, branch := range []int64{1, 2, 3} {
				err := d.Read(context.Background(), func(tx *db.Tx) error {
					list, err := holds.PullList(tx, branch, tt.today)
					for _, p := range list {
						if p.HoldID != ids[0] {
							continue
						}
						if asked[p.HoldID] != "" {
							t.Errorf("hold asked of two branches: %s and %d (%s)", asked[p.HoldID], branch, p.Barcode)
						}
						asked[p.HoldID] = fmt.Sprint(branch)
						switch {
						case branch == 1 && p.Barcode != tt.central, branch == 2 && p.Barcode != tt.eastern, branch == 3:
							t.Errorf("branch %d asked for %s", branch, p.Barcode)
						}
						until := ""
						if !p.AskedUntil.IsZero() {
							until = p.AskedUntil.Format(db.DayFormat)
						}
						if until != tt.until || (p.OtherBranches == 0) != (tt.missing != "") {
							t.Errorf("asked until %q with %d other branches, want %q", until, p.OtherBranches, tt.until)
						}
					}
					return err
				})
				if err != nil {
					t.Fatal(err)
				}
			}
			want := "1"
			if tt.central == "" {
				want = "2"
			}
			if asked[ids[0]] != want {
				t.Errorf("hold asked of branch %q, want %s", asked[ids[0]], want)
			}
		})
	}
}

func mustLoc(tb testing.TB, name string) *time.Location {
	tb.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		tb.Skip(err)
	}
	return loc
}

// TestServiceBranchHolds checks which branch the Holds page shows: the one
// asked for, else the staff user's own, else the first; a branch asked for
// that does not exist is not found.
func TestServiceBranchHolds(t *testing.T) {
	ctx := t.Context()
	d := mustOpenDB(t)
	svc := holds.NewService(d)
	for _, tt := range []struct{ code, home, want string }{
		{"eas", "CEN", "EAS"},
		{"", "EAS", "EAS"},
		{"", "NOPE", ""},
	} {
		bh, err := svc.BranchHolds(ctx, tt.code, tt.home, time.UTC)
		if err != nil {
			t.Fatalf("%q/%q: %v", tt.code, tt.home, err)
		}
		want := tt.want
		if want == "" {
			want = bh.Branches[0].Code
		}
		if bh.Branch.Code != want || !bh.Now.Equal(dbtest.Monday) {
			t.Errorf("%q/%q: branch %q at %v, want %q at %v", tt.code, tt.home, bh.Branch.Code, bh.Now, want, dbtest.Monday)
		}
	}
	if _, err := svc.BranchHolds(ctx, "NOPE", "CEN", time.UTC); stacks.ErrorCode(err) != stacks.ENOTFOUND {
		t.Errorf("unknown branch: %v, want ENOTFOUND", err)
	}
}

// TestServiceHoldChanges checks that each change returns the hold as it is
// after the change, read in the same transaction.
func TestServiceHoldChanges(t *testing.T) {
	ctx := t.Context()
	d := mustOpenDB(t)
	svc := holds.NewService(d)
	desk := stacks.Actor{Name: "desk", BranchID: 1}
	ids := addHolds(t, d, hold{card: "P0001"}, hold{card: "P0002"})
	h, err := svc.MoveHold(ctx, desk, ids[1], 1)
	if err != nil || h.ID != ids[1] || h.Priority != 1 {
		t.Errorf("MoveHold = %+v, %v; want priority 1", h, err)
	}
	h, err = svc.SuspendHold(ctx, desk, ids[0], "2027-01-15", time.UTC)
	if err != nil || h.SuspendedUntil != "2027-01-15" {
		t.Errorf("SuspendHold = %+v, %v", h, err)
	}
	h, err = svc.ResumeHold(ctx, desk, ids[0])
	if err != nil || h.SuspendedUntil != "" {
		t.Errorf("ResumeHold = %+v, %v", h, err)
	}
	if h, err := svc.Hold(ctx, ids[0]); err != nil || h.ID != ids[0] {
		t.Errorf("Hold = %+v, %v", h, err)
	}
	if _, err := svc.MoveHold(ctx, desk, 999999, 1); stacks.ErrorCode(err) != stacks.ENOTFOUND {
		t.Errorf("moving no hold: %v, want ENOTFOUND", err)
	}
}
