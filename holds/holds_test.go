package holds_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/catalog"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/dbtest"
	"github.com/stacks-ils/stacks/demo"
	"github.com/stacks-ils/stacks/demo/demotest"
	"github.com/stacks-ils/stacks/holds"
	"github.com/stacks-ils/stacks/passwords"
)

var today = time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)

var desk = stacks.Actor{Name: "desk", BranchID: 1}

// mustOpenDB opens a copy of a small demo library created on dbtest.Monday, in a file
// under tb.TempDir(), with the clock at dbtest.Monday, and adds a second copy of I00001's
// title at Eastside (I00001B).
func mustOpenDB(tb testing.TB) *db.DB {
	tb.Helper()
	d := demotest.Demo(tb, demo.Options{Titles: 50, Patrons: 10}, dbtest.Monday, db.Options{})
	d.Now = func() time.Time { return dbtest.Monday }
	exec(tb, d, `INSERT INTO items (barcode, record_id, home_branch_id, current_branch_id, item_type_id, status, created_at, updated_at)
		SELECT 'I00001B', record_id, 2, 2, item_type_id, 'available', created_at, updated_at FROM items WHERE barcode = 'I00001'`)
	return d
}

func TestMain(m *testing.M) {
	// demo.Create hashes the desk's and the administrator's passwords: at bcrypt's
	// real cost that is seconds a hash under the race detector, for every template.
	passwords.BcryptCost = bcrypt.MinCost
	os.Exit(dbtest.Main(m))
}

func exec(tb testing.TB, d *db.DB, query string, args ...any) {
	tb.Helper()
	err := d.Write(context.Background(), func(tx *db.Tx) error {
		_, err := tx.Exec(query, args...)
		return err
	})
	if err != nil {
		tb.Fatalf("%s: %v", query, err)
	}
}

func queryString(tb testing.TB, d *db.DB, query string, args ...any) string {
	tb.Helper()
	var s sql.NullString
	err := d.Read(context.Background(), func(tx *db.Tx) error { return tx.QueryRow(query, args...).Scan(&s) })
	if err != nil {
		tb.Fatalf("%s: %v", query, err)
	}
	return s.String
}

func id(tb testing.TB, d *db.DB, query string, args ...any) int64 {
	tb.Helper()
	var n int64
	err := d.Read(context.Background(), func(tx *db.Tx) error { return tx.QueryRow(query, args...).Scan(&n) })
	if err != nil {
		tb.Fatalf("%s: %v", query, err)
	}
	return n
}

func patron(tb testing.TB, d *db.DB, card string) int64 {
	return id(tb, d, `SELECT id FROM patrons WHERE card = ?`, card)
}

func item(tb testing.TB, d *db.DB, barcode string) *catalog.Item {
	tb.Helper()
	var it *catalog.Item
	err := d.Read(context.Background(), func(tx *db.Tx) error {
		var err error
		it, err = catalog.FindItemByBarcode(tx, barcode)
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
	return it
}

// hold describes a hold to insert on I00001's title.
type hold struct {
	card      string
	status    string // queued (default), waiting, in_transit
	itemLevel string // barcode of the copy for an item-level hold
	trapped   string // barcode of the copy set aside
	suspended string // suspended_until
	pickup    int64
}

// addHolds inserts holds on I00001's title in order; queued ones are numbered 1..n.
func addHolds(tb testing.TB, d *db.DB, hs ...hold) []int64 {
	tb.Helper()
	rec := id(tb, d, `SELECT record_id FROM items WHERE barcode = 'I00001'`)
	var ids []int64
	prio := 0
	for i, h := range hs {
		if h.status == "" {
			h.status = "queued"
		}
		if h.pickup == 0 {
			h.pickup = 1
		}
		p := 0
		if h.status == "queued" {
			prio++
			p = prio
		}
		var itemID, trapped, suspended any
		if h.itemLevel != "" {
			itemID = item(tb, d, h.itemLevel).ID
		}
		if h.trapped != "" {
			trapped = item(tb, d, h.trapped).ID
		}
		if h.suspended != "" {
			suspended = h.suspended
		}
		var hid int64
		err := d.Write(context.Background(), func(tx *db.Tx) error {
			return tx.QueryRow(`INSERT INTO holds (record_id, item_id, patron_id, pickup_branch_id, placed_at, priority, status, suspended_until, trapped_item_id)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
				rec, itemID, patron(tb, d, h.card), h.pickup, db.FormatTime(dbtest.Monday.Add(time.Duration(i-10)*time.Minute)), p, h.status, suspended, trapped).Scan(&hid)
		})
		if err != nil {
			tb.Fatal(err)
		}
		ids = append(ids, hid)
	}
	return ids
}

func TestCheckAtCheckout(t *testing.T) {
	// index names the hold, by its position in holds, that each answer should be; -1 none.
	tests := []struct {
		name                 string
		holds                []hold
		barcode              string
		trapped, queued, own int
	}{
		{"NoHolds", nil, "I00001", -1, -1, -1},
		{"QueuedOther", []hold{{card: "P0003"}}, "I00001", -1, 0, -1},
		{"QueuedFirstInLine", []hold{{card: "P0003"}, {card: "P0002"}}, "I00001", -1, 0, -1},
		{"SuspendedSkipped", []hold{{card: "P0003", suspended: "2026-12-15"}, {card: "P0002"}}, "I00001", -1, 1, -1},
		{"SuspensionOver", []hold{{card: "P0003", suspended: "2026-11-30"}}, "I00001", -1, 0, -1},
		{"Own", []hold{{card: "P0001"}}, "I00001", -1, -1, 0},
		{"OwnBehindOther", []hold{{card: "P0003"}, {card: "P0001"}}, "I00001", -1, 0, 1},
		{"OwnItemLevelThisCopy", []hold{{card: "P0001", itemLevel: "I00001"}}, "I00001", -1, -1, 0},
		{"OwnItemLevelOtherCopy", []hold{{card: "P0001", itemLevel: "I00001B"}}, "I00001", -1, -1, -1},
		{"ItemLevelOtherCopyIgnored", []hold{{card: "P0003", itemLevel: "I00001B"}}, "I00001", -1, -1, -1},
		{"ItemLevelThisCopy", []hold{{card: "P0003", itemLevel: "I00001"}}, "I00001", -1, 0, -1},
		{"TrappedForOther", []hold{{card: "P0003", status: "waiting", trapped: "I00001"}, {card: "P0002"}}, "I00001", 0, 1, -1},
		{"InTransitForOther", []hold{{card: "P0003", status: "in_transit", trapped: "I00001"}}, "I00001", 0, -1, -1},
		{"TrappedForSelf", []hold{{card: "P0001", status: "waiting", trapped: "I00001"}}, "I00001", 0, -1, -1},
		{"OtherCopyTrapped", []hold{{card: "P0003", status: "waiting", trapped: "I00001B"}}, "I00001", -1, -1, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := mustOpenDB(t)
			ids := addHolds(t, d, tt.holds...)
			it := item(t, d, tt.barcode)
			ctx, stats := db.WithStats(context.Background())
			var c holds.CheckoutCheck
			err := d.Read(ctx, func(tx *db.Tx) error {
				var err error
				c, err = holds.CheckAtCheckout(tx, it, patron(t, d, "P0001"), today)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			check := func(what string, got *holds.Ref, want int) {
				t.Helper()
				switch {
				case want < 0 && got != nil:
					t.Errorf("%s = hold %d, want none", what, got.HoldID)
				case want >= 0 && got == nil:
					t.Errorf("%s = none, want hold %d", what, ids[want])
				case want >= 0 && got.HoldID != ids[want]:
					t.Errorf("%s = hold %d, want %d", what, got.HoldID, ids[want])
				}
			}
			check("Trapped", c.Trapped, tt.trapped)
			check("Queued", c.Queued, tt.queued)
			check("Own", c.Own, tt.own)
			if c.Queued != nil && (c.Queued.PatronName == "" || c.Queued.PatronCard == "") {
				t.Errorf("Queued names nobody: %+v", c.Queued)
			}
			if n := stats.Statements(); n != 1 {
				t.Errorf("%d statements, want 1", n)
			}
		})
	}
}

func TestFill(t *testing.T) {
	d := mustOpenDB(t)
	ids := addHolds(t, d, hold{card: "P0001"}, hold{card: "P0002"}, hold{card: "P0003"})
	err := d.Write(context.Background(), func(tx *db.Tx) error { return holds.Fill(tx, desk, ids[0]) })
	if err != nil {
		t.Fatal(err)
	}
	if got := queryString(t, d, `SELECT status || ' ' || closed_at FROM holds WHERE id = ?`, ids[0]); got != "fulfilled 2026-11-30T10:00:00Z" {
		t.Errorf("filled hold %q", got)
	}
	if got := queryString(t, d, `SELECT string_agg(CAST(priority AS TEXT), ',' ORDER BY id) FROM holds WHERE id IN (?, ?)`, ids[1], ids[2]); got != "1,2" {
		t.Errorf("queue after fill %q, want 1,2", got)
	}
	if n := id(t, d, `SELECT count(*) FROM audit_log WHERE action = 'hold.fill' AND object_id = ?`, ids[0]); n != 1 {
		t.Errorf("%d audit entries", n)
	}

	t.Run("ErrNotOpen", func(t *testing.T) {
		err := d.Write(context.Background(), func(tx *db.Tx) error { return holds.Fill(tx, desk, ids[0]) })
		if stacks.ErrorCode(err) != stacks.ECONFLICT {
			t.Fatalf("err = %v, want conflict", err)
		}
	})

	t.Run("Trapped", func(t *testing.T) {
		d := mustOpenDB(t)
		ids := addHolds(t, d, hold{card: "P0001", status: "waiting", trapped: "I00001"}, hold{card: "P0002"})
		if err := d.Write(context.Background(), func(tx *db.Tx) error { return holds.Fill(tx, desk, ids[0]) }); err != nil {
			t.Fatal(err)
		}
		if got := queryString(t, d, `SELECT status || ' ' || coalesce(CAST(trapped_item_id AS TEXT), 'none') FROM holds WHERE id = ?`, ids[0]); got != "fulfilled none" {
			t.Errorf("hold %q", got)
		}
		if got := id(t, d, `SELECT priority FROM holds WHERE id = ?`, ids[1]); got != 1 {
			t.Errorf("queued hold moved to %d", got)
		}
	})
}

func TestRelease(t *testing.T) {
	d := mustOpenDB(t)
	ids := addHolds(t, d, hold{card: "P0003", status: "waiting", trapped: "I00001"}, hold{card: "P0002"}, hold{card: "P0001"})
	exec(t, d, `UPDATE holds SET waiting_since = '2026-11-29T10:00:00Z', pickup_by = '2026-12-07T20:00:00Z' WHERE id = ?`, ids[0])
	err := d.Write(context.Background(), func(tx *db.Tx) error { return holds.Release(tx, desk, ids[0], "lent by override") })
	if err != nil {
		t.Fatal(err)
	}
	got := queryString(t, d, `SELECT string_agg(status || ':' || priority || ':' || coalesce(CAST(trapped_item_id AS TEXT), '-') || ':' || coalesce(pickup_by, '-'), ' ' ORDER BY id)
		FROM holds WHERE id IN (?, ?, ?)`, ids[0], ids[1], ids[2])
	if got != "queued:1:-:- queued:2:-:- queued:3:-:-" {
		t.Errorf("holds after release: %q", got)
	}
	if detail := queryString(t, d, `SELECT detail FROM audit_log WHERE action = 'hold.release' AND object_id = ?`, ids[0]); detail != "lent by override" {
		t.Errorf("audit detail %q", detail)
	}

	t.Run("ErrNotTrapped", func(t *testing.T) {
		err := d.Write(context.Background(), func(tx *db.Tx) error { return holds.Release(tx, desk, ids[1], "") })
		if stacks.ErrorCode(err) != stacks.ECONFLICT {
			t.Fatalf("err = %v, want conflict", err)
		}
	})
}

func TestRenewalBlocked(t *testing.T) {
	tests := []struct {
		name  string
		setup string // SQL run first
		holds []hold
		want  bool
	}{
		{"NoHolds", "", nil, false},
		{"HoldOtherCopyAvailable", "", []hold{{card: "P0003"}}, false},
		{"TwoHoldsOneOtherCopy", "", []hold{{card: "P0003"}, {card: "P0002"}}, true},
		{"HoldOtherCopyOut", `UPDATE items SET status = 'on_loan' WHERE barcode = 'I00001B'`, []hold{{card: "P0003"}}, true},
		{"HoldOtherCopyNotForLoan", `UPDATE items SET item_type_id = 3 WHERE barcode = 'I00001B'`, []hold{{card: "P0003"}}, true},
		{"ItemLevelOnThisCopy", "", []hold{{card: "P0003", itemLevel: "I00001"}}, true},
		{"ItemLevelOnOtherCopy", `UPDATE items SET status = 'on_loan' WHERE barcode = 'I00001B'`, []hold{{card: "P0003", itemLevel: "I00001B"}}, false},
		{"Suspended", `UPDATE items SET status = 'on_loan' WHERE barcode = 'I00001B'`, []hold{{card: "P0003", suspended: "2026-12-15"}}, false},
		{"WaitingHoldDoesNotBlock", `UPDATE items SET status = 'on_hold_shelf' WHERE barcode = 'I00001B'`,
			[]hold{{card: "P0003", status: "waiting", trapped: "I00001B"}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := mustOpenDB(t)
			exec(t, d, `UPDATE items SET status = 'on_loan' WHERE barcode = 'I00001'`)
			if tt.setup != "" {
				exec(t, d, tt.setup)
			}
			addHolds(t, d, tt.holds...)
			it := item(t, d, "I00001")
			var got bool
			err := d.Read(context.Background(), func(tx *db.Tx) error {
				var err error
				got, err = holds.RenewalBlocked(tx, it, today)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("RenewalBlocked = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestTrapAtCheckin(t *testing.T) {
	deadline := func(pickup, category int64) (time.Time, error) {
		return time.Date(2026, 12, 7, 20, 0, 0, 0, time.UTC).Add(time.Duration(pickup*100+category) * time.Second), nil
	}
	trap := func(t *testing.T, d *db.DB, barcode string, branch int64, fn holds.PickupDeadline) (*holds.Trap, error) {
		t.Helper()
		it := item(t, d, barcode)
		var tr *holds.Trap
		err := d.Write(context.Background(), func(tx *db.Tx) error {
			var err error
			tr, err = holds.TrapAtCheckin(tx, desk, it, branch, today, fn)
			return err
		})
		return tr, err
	}

	t.Run("NoHold", func(t *testing.T) {
		d := mustOpenDB(t)
		tr, err := trap(t, d, "I00001", 1, deadline)
		if err != nil || tr != nil {
			t.Fatalf("trap %+v, err %v", tr, err)
		}
	})

	t.Run("WaitingHere", func(t *testing.T) {
		d := mustOpenDB(t)
		ids := addHolds(t, d, hold{card: "P0003", pickup: 1})
		tr, err := trap(t, d, "I00001", 1, deadline)
		if err != nil {
			t.Fatal(err)
		}
		// The deadline is asked for the pickup branch and the patron's category (Adult, 1).
		if tr == nil || tr.HoldID != ids[0] || tr.Status != holds.StatusWaiting || tr.InTransit ||
			!tr.PickupBy.Equal(time.Date(2026, 12, 7, 20, 1, 41, 0, time.UTC)) || tr.PatronName != "Casey Waiting" {
			t.Fatalf("trap %+v", tr)
		}
		if got := queryString(t, d, `SELECT status || ' ' || current_branch_id FROM items WHERE barcode = 'I00001'`); got != "on_hold_shelf 1" {
			t.Errorf("item %q", got)
		}
	})

	t.Run("InTransitElsewhere", func(t *testing.T) {
		d := mustOpenDB(t)
		ids := addHolds(t, d, hold{card: "P0003", pickup: 2})
		called := false
		tr, err := trap(t, d, "I00001", 1, func(int64, int64) (time.Time, error) { called = true; return time.Time{}, nil })
		if err != nil {
			t.Fatal(err)
		}
		if tr == nil || tr.HoldID != ids[0] || tr.Status != holds.StatusInTransit || !tr.InTransit || tr.PickupBranchCode != "EAS" {
			t.Fatalf("trap %+v", tr)
		}
		if called {
			t.Error("a pickup deadline was set for a copy still travelling")
		}
		if got := queryString(t, d, `SELECT status || ' ' || transit_to_id FROM items WHERE barcode = 'I00001'`); got != "in_transit 2" {
			t.Errorf("item %q", got)
		}
	})

	t.Run("NotForLoanIgnored", func(t *testing.T) {
		d := mustOpenDB(t)
		addHolds(t, d, hold{card: "P0003"})
		exec(t, d, `UPDATE items SET item_type_id = 3 WHERE barcode = 'I00001'`)
		tr, err := trap(t, d, "I00001", 1, deadline)
		if err != nil || tr != nil {
			t.Fatalf("trap %+v, err %v", tr, err)
		}
	})

	t.Run("ErrDeadlineRollsBack", func(t *testing.T) {
		d := mustOpenDB(t)
		ids := addHolds(t, d, hold{card: "P0003"})
		boom := errors.New("no rule")
		_, err := trap(t, d, "I00001", 1, func(int64, int64) (time.Time, error) { return time.Time{}, boom })
		if !errors.Is(err, boom) {
			t.Fatalf("err = %v, want the deadline's error", err)
		}
		if got := queryString(t, d, `SELECT status FROM holds WHERE id = ?`, ids[0]); got != "queued" {
			t.Errorf("hold %s after a failed trap", got)
		}
	})

	t.Run("OrderOfPreference", func(t *testing.T) {
		for _, tc := range []struct {
			name  string
			holds []hold
			want  int
		}{
			{"RecordLevelFirstInLine", []hold{{card: "P0003"}, {card: "P0002"}}, 0},
			{"ItemLevelBeatsEarlierRecordLevel", []hold{{card: "P0003"}, {card: "P0002", itemLevel: "I00001"}}, 1},
			{"AlreadyTrappedBeatsItemLevel", []hold{{card: "P0002", itemLevel: "I00001"}, {card: "P0003", status: "in_transit", trapped: "I00001"}}, 1},
			{"SuspendedSkipped", []hold{{card: "P0003", suspended: "2026-12-01"}, {card: "P0002"}}, 1},
			{"OtherCopysItemLevelSkipped", []hold{{card: "P0003", itemLevel: "I00001B"}, {card: "P0002"}}, 1},
		} {
			t.Run(tc.name, func(t *testing.T) {
				d := mustOpenDB(t)
				ids := addHolds(t, d, tc.holds...)
				tr, err := trap(t, d, "I00001", 1, deadline)
				if err != nil {
					t.Fatal(err)
				}
				if tr == nil || tr.HoldID != ids[tc.want] {
					t.Fatalf("trapped %+v, want hold %d", tr, ids[tc.want])
				}
				// The queue stays numbered 1..n without gaps or ties.
				got := queryString(t, d, `SELECT string_agg(CAST(priority AS TEXT), ',' ORDER BY priority) FROM holds
					WHERE id IN (?, ?) AND status = 'queued'`, ids[0], ids[1])
				if got != "" && got != "1" {
					t.Errorf("queued priorities after the trap: %s, want 1", got)
				}
			})
		}
	})
}
