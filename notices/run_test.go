package notices_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/notices"
)

func TestRunDaily(t *testing.T) {
	t.Run("DigestPerPatronAndDelivery", func(t *testing.T) {
		l := newLib(t, "UTC")
		alex := l.patron("P1", "Alex", "Reader", "alex@example.org")
		blake := l.patron("P2", "Blake", "Paper", "")
		// Due Monday 30 November at closing: one open day late on Tuesday.
		l.loan(alex, "Overdue One", at(time.UTC, 2026, 11, 30, 20, 0))
		// Due Thursday: within two open days (Wednesday, Thursday).
		l.loan(alex, "Due Thursday", at(time.UTC, 2026, 12, 3, 20, 0))
		// Due in three weeks: nothing yet.
		l.loan(alex, "Due Later", at(time.UTC, 2026, 12, 21, 20, 0))
		// Eight open days late (Sundays closed): the second notice, not the first.
		l.loan(blake, "Long Overdue", at(time.UTC, 2026, 11, 21, 20, 0))

		res := l.run(notices.RunOptions{})
		if res.Day != "2026-12-01" || res.Items != 3 || res.Messages != 2 {
			t.Fatalf("run = %+v, want day 2026-12-01, 3 items, 2 messages", res)
		}
		if got, want := l.items(alex), []string{"overdue/1/Overdue One", "predue/0/Due Thursday"}; !slices.Equal(got, want) {
			t.Errorf("Alex's items = %v, want %v", got, want)
		}
		if got, want := l.items(blake), []string{"overdue/2/Long Overdue"}; !slices.Equal(got, want) {
			t.Errorf("Blake's items = %v, want %v", got, want)
		}
		ms := l.messages(notices.Filter{PatronID: alex})
		if len(ms) != 1 || ms[0].Delivery != notices.DeliveryEmail || ms[0].To != "alex@example.org" || ms[0].Status != notices.StatusPending {
			t.Fatalf("Alex's messages = %+v, want one pending email", ms)
		}
		for _, want := range []string{"Dear Alex Reader", "Overdue One", "Due Thursday", "was due Monday 30 November 2026 at 20:00", "due Thursday 3 December 2026 at 20:00"} {
			if !strings.Contains(ms[0].Text, want) {
				t.Errorf("Alex's digest lacks %q:\n%s", want, ms[0].Text)
			}
		}
		if ms[0].Subject != "Notices from Stacks Library" {
			t.Errorf("digest subject = %q", ms[0].Subject)
		}
		bm := l.messages(notices.Filter{PatronID: blake})
		if len(bm) != 1 || bm[0].Delivery != notices.DeliveryPrint || bm[0].Subject != "Second notice: an item is overdue" {
			t.Fatalf("Blake's messages = %+v, want one printed second notice", bm)
		}

		// Once a day, however often it starts.
		if res := l.run(notices.RunOptions{}); !res.Skipped {
			t.Errorf("second run the same day = %+v, want skipped", res)
		}
		if res := l.run(notices.RunOptions{Force: true}); res.Items != 0 || res.Messages != 0 {
			t.Errorf("forced second run = %+v, want nothing new", res)
		}
		// The next day: nothing changed level.
		l.clock.Set(testNow.AddDate(0, 0, 1))
		if res := l.run(notices.RunOptions{}); res.Skipped || res.Items != 0 {
			t.Errorf("next day's run = %+v, want run with nothing new", res)
		}
	})

	t.Run("PreferencesAndNone", func(t *testing.T) {
		l := newLib(t, "UTC")
		alex := l.patron("P1", "Alex", "Reader", "alex@example.org")
		l.loan(alex, "Overdue One", at(time.UTC, 2026, 11, 30, 20, 0))
		l.loan(alex, "Due Thursday", at(time.UTC, 2026, 12, 3, 20, 0))
		err := l.d.Write(context.Background(), func(tx *db.Tx) error {
			return notices.SetPatronPreferences(tx, stacks.Actor{StaffID: 1, Name: "desk"}, alex, "alex@example.org",
				map[string]string{notices.TriggerOverdue: notices.DeliveryPrint, notices.TriggerPredue: notices.DeliveryNone})
		})
		if err != nil {
			t.Fatal(err)
		}
		l.run(notices.RunOptions{})
		ms := l.messages(notices.Filter{PatronID: alex})
		if len(ms) != 1 || ms[0].Delivery != notices.DeliveryPrint || strings.Contains(ms[0].Text, "Due Thursday") {
			t.Fatalf("messages = %+v, want one printed overdue notice without the reminder", ms)
		}
		if n := l.queryInt(`SELECT count(*) FROM notice_items WHERE delivery = 'none'`); n != 1 {
			t.Errorf("items closed unsent = %d, want 1 (the reminder)", n)
		}
	})

	t.Run("ErrEmailWithoutAddress", func(t *testing.T) {
		l := newLib(t, "UTC")
		p := l.patron("P1", "No", "Mail", "")
		err := l.d.Write(context.Background(), func(tx *db.Tx) error {
			return notices.SetPatronPreferences(tx, stacks.Actor{StaffID: 1, Name: "desk"}, p, "",
				map[string]string{notices.TriggerOverdue: notices.DeliveryEmail})
		})
		if stacks.ErrorCode(err) != stacks.EINVALID || stacks.ErrorField(err) != "notice_overdue" {
			t.Fatalf("err = %v, want invalid notice_overdue", err)
		}
	})

	t.Run("RestartMidRun", func(t *testing.T) {
		l := newLib(t, "UTC")
		var ids []int64
		for i := range 7 {
			p := l.patron(fmt.Sprintf("P%d", i), "Patron", fmt.Sprint(i), fmt.Sprintf("p%d@example.org", i))
			ids = append(ids, p)
			l.loan(p, fmt.Sprintf("Late %d", i), at(time.UTC, 2026, 11, 30, 20, 0))
			l.loan(p, fmt.Sprintf("Soon %d", i), at(time.UTC, 2026, 12, 2, 20, 0))
		}
		crash := errors.New("power cut")
		chunks := 0
		_, err := notices.RunDaily(context.Background(), l.d, notices.RunOptions{ChunkSize: 4, AfterChunk: func() error {
			chunks++
			if chunks == 2 {
				return crash
			}
			return nil
		}})
		if !errors.Is(err, crash) {
			t.Fatalf("first run: %v, want the crash", err)
		}
		if n := l.queryInt(`SELECT count(*) FROM notice_items`); n != 8 {
			t.Fatalf("items after the crash = %d, want 8 (two chunks)", n)
		}
		if n := l.queryInt(`SELECT count(*) FROM notice_runs WHERE finished_at IS NOT NULL`); n != 0 {
			t.Fatalf("a crashed run is recorded as finished")
		}
		// The server starts again, and crashes again while composing.
		chunks = 0
		_, err = notices.RunDaily(context.Background(), l.d, notices.RunOptions{ChunkSize: 4, AfterChunk: func() error {
			chunks++
			if chunks == 3 { // after the 2 remaining chunks of items, the first compose transaction
				return crash
			}
			return nil
		}})
		if !errors.Is(err, crash) {
			t.Fatalf("second run: %v, want the crash", err)
		}
		res := l.run(notices.RunOptions{})
		if res.Skipped {
			t.Fatal("the day was recorded as run before it finished")
		}
		if n := l.queryInt(`SELECT count(*) FROM notice_items`); n != 14 {
			t.Errorf("items = %d, want 14: each loan once", n)
		}
		if n := l.queryInt(`SELECT count(*) FROM notice_items WHERE message_id IS NULL`); n != 0 {
			t.Errorf("%d items left out of every message", n)
		}
		for _, p := range ids {
			ms := l.messages(notices.Filter{PatronID: p})
			if len(ms) != 1 {
				t.Errorf("patron %d has %d messages, want 1", p, len(ms))
			}
		}
		if res := l.run(notices.RunOptions{}); !res.Skipped {
			t.Errorf("a finished day runs again: %+v", res)
		}
	})

	t.Run("CatchUpAfterDowntime", func(t *testing.T) {
		l := newLib(t, "UTC")
		p := l.patron("P1", "Alex", "Reader", "alex@example.org")
		l.loan(p, "Gone Long", at(time.UTC, 2026, 11, 10, 20, 0))
		// Last run on the 11th (one open day late); down until 1 December, 18
		// open days late: the final notice only, not the second as well.
		l.clock.Set(at(time.UTC, 2026, 11, 11, 7, 0))
		l.run(notices.RunOptions{})
		l.clock.Set(testNow)
		l.run(notices.RunOptions{})
		if got, want := l.items(p), []string{"overdue/1/Gone Long", "overdue/3/Gone Long"}; !slices.Equal(got, want) {
			t.Fatalf("items = %v, want %v", got, want)
		}
		if ms := l.messages(notices.Filter{PatronID: p}); len(ms) != 2 || !strings.HasPrefix(ms[0].Subject, "Final notice") {
			t.Fatalf("messages = %+v", ms)
		}
	})

	t.Run("DryRunChangesNothing", func(t *testing.T) {
		l := newLib(t, "UTC")
		alex := l.patron("P1", "Alex", "Reader", "alex@example.org")
		l.loan(alex, "Overdue One", at(time.UTC, 2026, 11, 30, 20, 0))
		res := l.run(notices.RunOptions{DryRun: true})
		if len(res.Preview) != 1 || res.Preview[0].To != "alex@example.org" || !strings.Contains(res.Preview[0].Text, "Overdue One") {
			t.Fatalf("preview = %+v", res.Preview)
		}
		for _, table := range []string{"notice_items", "notice_messages", "notice_runs"} {
			if n := l.queryInt(`SELECT count(*) FROM ` + table); n != 0 {
				t.Errorf("%s has %d rows after a dry run", table, n)
			}
		}
	})

	t.Run("HoldsAndCards", func(t *testing.T) {
		l := newLib(t, "UTC")
		p := l.patron("P1", "Casey", "Waiting", "casey@example.org")
		l.exec(`UPDATE patrons SET expires_on = '2026-12-10' WHERE id = ?`, p)
		itemID, recordID := l.item("On The Shelf")
		// Waiting since before notices existed, to collect by Thursday: the sweep
		// tells the patron it is available; the next day's run, that it expires.
		l.exec(`INSERT INTO holds (record_id, patron_id, pickup_branch_id, placed_at, priority, status, trapped_item_id, waiting_since, pickup_by)
			VALUES (?, ?, 1, '2026-11-20T10:00:00Z', 0, 'waiting', ?, '2026-11-26T10:00:00Z', '2026-12-03T20:00:00Z')`, recordID, p, itemID)
		l.run(notices.RunOptions{})
		if got, want := l.items(p), []string{"hold_available/0/On The Shelf", "card_expiry/20261210/"}; !slices.Equal(got, want) {
			t.Fatalf("items = %v, want %v", got, want)
		}
		l.clock.Set(testNow.AddDate(0, 0, 1))
		l.run(notices.RunOptions{})
		if got := l.items(p); len(got) != 3 || got[2] != "hold_expiring/0/On The Shelf" {
			t.Fatalf("items = %v, want the hold expiring third", got)
		}
		// The card renewed and about to expire again, a year on: told again.
		l.exec(`UPDATE patrons SET expires_on = '2027-12-10' WHERE id = ?`, p)
		l.clock.Set(time.Date(2027, 12, 1, 10, 0, 0, 0, time.UTC))
		l.run(notices.RunOptions{})
		if got := l.items(p); got[len(got)-1] != "card_expiry/20271210/" {
			t.Fatalf("items = %v, want the renewed card's expiry last", got)
		}
	})

	t.Run("LostBillHook", func(t *testing.T) {
		l := newLib(t, "UTC")
		p := l.patron("P1", "Lost", "It", "")
		loan := l.loan(p, "Never Returned", at(time.UTC, 2026, 10, 1, 20, 0))
		l.exec(`UPDATE loans SET lost_at = '2026-11-29T10:00:00Z' WHERE id = ?`, loan) // as circulation declares it
		for range 2 {
			err := l.d.Write(context.Background(), func(tx *db.Tx) error {
				return notices.QueueLostBill(tx, loan, 2250, time.UTC)
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		err := l.d.Write(context.Background(), func(tx *db.Tx) error { return notices.QueueLostBill(tx, 9999, 100, time.UTC) })
		if stacks.ErrorCode(err) != stacks.ENOTFOUND {
			t.Errorf("bill for no loan: %v, want not found", err)
		}
		l.run(notices.RunOptions{})
		ms := l.messages(notices.Filter{PatronID: p})
		// A lost loan is billed, not reminded: no overdue notice beside the bill.
		if len(ms) != 1 || !strings.Contains(ms[0].Text, "Never Returned / Author (B00001): 22.50") || strings.Contains(ms[0].Text, "Final notice") {
			t.Fatalf("messages = %+v, want one digest with the bill and no overdue notice", ms)
		}
	})

	// The item came back (the loan is closed, its bill reversed) before the run:
	// the bill is stale and goes to nobody.
	t.Run("LostBillReturnedBeforeRun", func(t *testing.T) {
		l := newLib(t, "UTC")
		p := l.patron("P1", "Lost", "It", "")
		loan := l.loan(p, "Came Back", at(time.UTC, 2026, 11, 29, 20, 0))
		l.exec(`UPDATE loans SET lost_at = '2026-11-30T09:00:00Z' WHERE id = ?`, loan)
		if err := l.d.Write(context.Background(), func(tx *db.Tx) error {
			return notices.QueueLostBill(tx, loan, 2250, time.UTC)
		}); err != nil {
			t.Fatal(err)
		}
		l.exec(`UPDATE loans SET returned_at = '2026-11-30T09:30:00Z' WHERE id = ?`, loan)
		l.run(notices.RunOptions{})
		if ms := l.messages(notices.Filter{PatronID: p}); len(ms) != 0 {
			t.Fatalf("messages = %+v, want none: the lost item came back", ms)
		}
		if n := l.queryInt(`SELECT count(*) FROM notice_items WHERE trigger = 'lost_bill' AND delivery = ''`); n != 0 {
			t.Errorf("%d lost bill items left open", n)
		}
	})
}

// TestCalendarEdges: days are the library's open days in its time zone.
func TestCalendarEdges(t *testing.T) {
	t.Run("ClosedDay", func(t *testing.T) {
		l := newLib(t, "UTC")
		p := l.patron("P1", "Alex", "Reader", "alex@example.org")
		l.exec(`INSERT INTO closed_days (branch_id, day, description) VALUES (NULL, '2026-12-07', 'Holiday')`)
		l.loan(p, "Due Saturday", at(time.UTC, 2026, 12, 5, 20, 0))
		for _, day := range []int{4, 6, 7} { // Friday (the reminder),  Sunday (weekly closure), Monday (holiday)
			l.clock.Set(at(time.UTC, 2026, 12, day, 9, 0))
			l.run(notices.RunOptions{})
			if got := l.items(p); len(got) != 1 || got[0] != "predue/0/Due Saturday" {
				t.Fatalf("on the %d: items = %v, want only the reminder (no open day late yet)", day, got)
			}
		}
		l.clock.Set(at(time.UTC, 2026, 12, 8, 9, 0))
		l.run(notices.RunOptions{})
		if got := l.items(p); len(got) != 2 || got[1] != "overdue/1/Due Saturday" {
			t.Fatalf("Tuesday: items = %v, want the first overdue notice", got)
		}
	})

	t.Run("DueDay", func(t *testing.T) {
		l := newLib(t, "UTC")
		p := l.patron("P1", "Alex", "Reader", "alex@example.org")
		l.exec(`UPDATE notice_rules SET predue_days = 0`)
		l.loan(p, "Due Today", at(time.UTC, 2026, 12, 1, 20, 0))
		// After closing on the due day the loan is late, but no open day has
		// passed: no overdue notice until the next morning.
		l.clock.Set(at(time.UTC, 2026, 12, 1, 21, 0))
		l.run(notices.RunOptions{})
		if got := l.items(p); len(got) != 0 {
			t.Fatalf("evening of the due day: %v, want nothing", got)
		}
		l.clock.Set(at(time.UTC, 2026, 12, 2, 7, 0))
		l.run(notices.RunOptions{})
		if got := l.items(p); len(got) != 1 || got[0] != "overdue/1/Due Today" {
			t.Fatalf("the next day: %v, want the first overdue notice", got)
		}
	})

	t.Run("DueDayReminder", func(t *testing.T) {
		l := newLib(t, "UTC")
		p := l.patron("P1", "Alex", "Reader", "alex@example.org")
		l.exec(`UPDATE notice_rules SET predue_days = 1`)
		l.loan(p, "Due Today", at(time.UTC, 2026, 12, 1, 20, 0))
		l.run(notices.RunOptions{})
		if got := l.items(p); len(got) != 1 || got[0] != "predue/0/Due Today" {
			t.Fatalf("the morning of the due day: %v, want the reminder", got)
		}
	})

	t.Run("DST", func(t *testing.T) {
		ny, err := time.LoadLocation("America/New_York")
		if err != nil {
			t.Skip(err)
		}
		l := newLib(t, "America/New_York")
		p := l.patron("P1", "Alex", "Reader", "alex@example.org")
		// Due Saturday 31 October at 20:00 EDT; clocks go back at 02:00 on Sunday
		// 1 November (closed); Monday 2 November is the first open day late.
		l.loan(p, "Due Before DST", at(ny, 2026, 10, 31, 20, 0))
		// 23:30 on Sunday local is already Monday in UTC: still Sunday's run.
		l.clock.Set(at(ny, 2026, 11, 1, 23, 30))
		res := l.run(notices.RunOptions{})
		if res.Day != "2026-11-01" || len(l.items(p)) != 0 {
			t.Fatalf("Sunday 23:30: day %s, items %v; want 2026-11-01 and none", res.Day, l.items(p))
		}
		l.clock.Set(at(ny, 2026, 11, 2, 7, 0))
		res = l.run(notices.RunOptions{})
		if res.Day != "2026-11-02" {
			t.Fatalf("Monday: day %s", res.Day)
		}
		ms := l.messages(notices.Filter{PatronID: p})
		if len(ms) != 1 || !strings.Contains(ms[0].Text, "was due Saturday 31 October 2026 at 20:00") {
			t.Fatalf("messages = %+v, want the overdue notice with the local due time", ms)
		}
	})
}

func TestDailyDue(t *testing.T) {
	l := newLib(t, "UTC")
	due := func() bool {
		ok, err := notices.DailyDue(context.Background(), l.d, "07:00")
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	// Never run (a new install, or the upgrade that brought notices): it waits
	// for its time of day, however late the last day is.
	l.clock.Set(at(time.UTC, 2026, 12, 1, 6, 0))
	if due() {
		t.Fatal("never run: due before its time")
	}
	l.clock.Set(at(time.UTC, 2026, 12, 1, 7, 0))
	if !due() {
		t.Fatal("never run: not due at its time")
	}
	l.run(notices.RunOptions{})
	if due() {
		t.Fatal("due again the same day")
	}
	// The next day, before 07:00: yesterday ran, so it waits.
	l.clock.Set(at(time.UTC, 2026, 12, 2, 6, 59))
	if due() {
		t.Fatal("due before its time")
	}
	l.clock.Set(at(time.UTC, 2026, 12, 2, 7, 0))
	if !due() {
		t.Fatal("not due at its time")
	}
	// Down for two days: due at start, before its time.
	l.clock.Set(at(time.UTC, 2026, 12, 4, 1, 0))
	if !due() {
		t.Fatal("a missed day is not caught up")
	}
}

// TestOccurrences: the once-only key holds the occurrence, so a renewed loan and a
// hold trapped again have notices of their own, and a run repeated has none twice.
func TestOccurrences(t *testing.T) {
	t.Run("RenewedLoan", func(t *testing.T) {
		l := newLib(t, "UTC")
		p := l.patron("P1", "Alex", "Reader", "alex@example.org")
		loan := l.loan(p, "Renewed", at(time.UTC, 2026, 11, 30, 20, 0))
		l.run(notices.RunOptions{}) // Tuesday 1 December: a day late
		// Renewed as circulation does it: the same row, a new due date (Monday 21).
		l.exec(`UPDATE loans SET due_at = ?, renewals = renewals + 1 WHERE id = ?`, "2026-12-21T20:00:00Z", loan)
		l.clock.Set(at(time.UTC, 2026, 12, 19, 9, 0)) // Saturday: due within 2 open days
		l.run(notices.RunOptions{})
		l.run(notices.RunOptions{Force: true})
		l.clock.Set(at(time.UTC, 2026, 12, 22, 9, 0)) // a day late again
		l.run(notices.RunOptions{})
		want := []string{"overdue/1/Renewed", "predue/0/Renewed", "overdue/1/Renewed"}
		if got := l.items(p); !slices.Equal(got, want) {
			t.Fatalf("items = %v, want %v", got, want)
		}
		if ms := l.messages(notices.Filter{PatronID: p}); len(ms) != 3 || !strings.Contains(ms[1].Text, "21 December") {
			t.Fatalf("messages = %+v, want three, the reminder for the new due date", ms)
		}
	})

	t.Run("RenewedBeforeCompose", func(t *testing.T) {
		// An overdue item recorded, then the loan renewed before the digest was
		// composed: the item is closed without a message.
		l := newLib(t, "UTC")
		p := l.patron("P1", "Alex", "Reader", "alex@example.org")
		loan := l.loan(p, "Renewed", at(time.UTC, 2026, 11, 30, 20, 0))
		stop := errors.New("stop")
		if _, err := notices.RunDaily(context.Background(), l.d, notices.RunOptions{AfterChunk: func() error { return stop }}); !errors.Is(err, stop) {
			t.Fatalf("run = %v", err)
		}
		l.exec(`UPDATE loans SET due_at = ? WHERE id = ?`, "2026-12-21T20:00:00Z", loan)
		l.run(notices.RunOptions{})
		if ms := l.messages(notices.Filter{PatronID: p}); len(ms) != 0 {
			t.Fatalf("messages = %+v, want none", ms)
		}
	})

	t.Run("HoldTrappedAgain", func(t *testing.T) {
		l := newLib(t, "UTC")
		p := l.patron("P1", "Casey", "Waiting", "casey@example.org")
		itemID, recordID := l.item("Held")
		l.exec(`INSERT INTO holds (id, record_id, patron_id, pickup_branch_id, placed_at, priority, status, trapped_item_id, waiting_since, pickup_by)
			VALUES (1, ?, ?, 1, '2026-11-20T10:00:00Z', 0, 'waiting', ?, '2026-11-26T10:00:00Z', '2026-12-03T20:00:00Z')`, recordID, p, itemID)
		l.run(notices.RunOptions{})
		l.clock.Set(testNow.AddDate(0, 0, 1))
		l.run(notices.RunOptions{})
		// Released (not collected), then trapped again ten days later.
		l.exec(`UPDATE holds SET status = 'queued', priority = 1, trapped_item_id = NULL, waiting_since = NULL, pickup_by = NULL WHERE id = 1`)
		l.exec(`UPDATE holds SET status = 'waiting', priority = 0, trapped_item_id = ?, waiting_since = '2026-12-11T10:00:00Z', pickup_by = '2026-12-18T20:00:00Z' WHERE id = 1`, itemID)
		err := l.d.Write(context.Background(), func(tx *db.Tx) error { return notices.QueueHoldAvailable(tx, 1, time.UTC) })
		if err != nil {
			t.Fatal(err)
		}
		l.clock.Set(at(time.UTC, 2026, 12, 11, 10, 0))
		l.run(notices.RunOptions{})
		l.clock.Set(at(time.UTC, 2026, 12, 16, 10, 0)) // Wednesday: Friday's deadline is 2 open days away
		l.run(notices.RunOptions{})
		want := []string{"hold_available/0/Held", "hold_expiring/0/Held", "hold_available/0/Held", "hold_expiring/0/Held"}
		if got := l.items(p); !slices.Equal(got, want) {
			t.Fatalf("items = %v, want %v", got, want)
		}
		if ms := l.messages(notices.Filter{PatronID: p}); len(ms) != 4 {
			t.Fatalf("%d messages, want 4", len(ms))
		}
	})
}

// TestDailyRunAcrossDST: the scheduler, ticking every 10 minutes through a
// change of clocks, runs each library day once, at the configured local time; on
// the spring change day a time that does not exist (02:30) runs at the first
// tick after it (03:00), and on the autumn one a time that happens twice (01:30)
// runs the first time only.
func TestDailyRunAcrossDST(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Skip(err)
	}
	for _, tc := range []struct {
		name, at string
		from     time.Time
		want     map[string]string // library day: local start time
	}{
		{"FallBack", "01:30", at(ny, 2026, 10, 31, 0, 0), map[string]string{
			"2026-10-31": "01:30 EDT", "2026-11-01": "01:30 EDT", "2026-11-02": "01:30 EST"}},
		{"SpringForward", "02:30", at(ny, 2026, 3, 7, 0, 0), map[string]string{
			"2026-03-07": "02:30 EST", "2026-03-08": "03:00 EDT", "2026-03-09": "02:30 EDT"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := newLib(t, "America/New_York")
			s := &notices.Scheduler{DB: l.d, At: tc.at}
			for now := tc.from.UTC(); now.Before(tc.from.UTC().Add(3 * 24 * time.Hour)); now = now.Add(10 * time.Minute) {
				l.clock.Set(now)
				if err := s.Tick(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			got := map[string]string{}
			err := l.d.Read(context.Background(), func(tx *db.Tx) error {
				rows, err := tx.Query(`SELECT library_day, started_at FROM notice_runs ORDER BY library_day`)
				if err != nil {
					return err
				}
				defer rows.Close()
				for rows.Next() {
					var day string
					var started db.Time
					if err := rows.Scan(&day, &started); err != nil {
						return err
					}
					got[day] = started.In(ny).Format("15:04 MST")
				}
				return rows.Err()
			})
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("runs = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestRuleResolution: the most specific notice rule wins for a loan's patron
// category and item type, as with the circulation rules: category and item type,
// then category, then item type, then the default.
func TestRuleResolution(t *testing.T) {
	for _, tc := range []struct {
		name     string
		combined bool
		// the day of December each loan gets its first overdue notice, due
		// Monday 30 November (open days late: Tuesday 1 is 1 ... Saturday 5 is 5).
		want map[string]int
	}{
		{"AllFour", true, map[string]int{"Adult Book": 1, "Adult DVD": 2, "Child Book": 3, "Child DVD": 5}},
		{"CategoryBeatsItemType", false, map[string]int{"Adult Book": 1, "Adult DVD": 2, "Child Book": 3, "Child DVD": 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := newLib(t, "UTC")
			l.exec(`INSERT INTO patron_categories (id, code, name) VALUES (2, 'CHILD', 'Child')`)
			l.exec(`INSERT INTO item_types (id, code, name) VALUES (2, 'DVD', 'DVD')`)
			rules := []notices.Rule{
				{PatronCategoryID: 2, PredueDays: 0, OverdueDays: [3]int{3, 7, 14}},
				{ItemTypeID: 2, PredueDays: 0, OverdueDays: [3]int{2, 7, 14}},
			}
			if tc.combined {
				rules = append(rules, notices.Rule{PatronCategoryID: 2, ItemTypeID: 2, OverdueDays: [3]int{5, 7, 14}})
			}
			for _, r := range rules {
				if err := notices.NewService(l.d, nil).SaveRule(context.Background(), stacks.Actor{StaffID: 1, Name: "admin"}, r); err != nil {
					t.Fatal(err)
				}
			}
			adult := l.patron("P1", "Alex", "Adult", "alex@example.org")
			child := l.patron("P2", "Kim", "Child", "kim@example.org")
			l.exec(`UPDATE patrons SET category_id = 2 WHERE id = ?`, child)
			due := at(time.UTC, 2026, 11, 30, 20, 0)
			for _, title := range []string{"Adult Book", "Adult DVD", "Child Book", "Child DVD"} {
				p := adult
				if strings.HasPrefix(title, "Child") {
					p = child
				}
				loan := l.loan(p, title, due)
				if strings.HasSuffix(title, "DVD") {
					l.exec(`UPDATE items SET item_type_id = 2 WHERE id = (SELECT item_id FROM loans WHERE id = ?)`, loan)
				}
			}
			got := map[string]int{}
			for day := 1; day <= 5; day++ {
				l.clock.Set(at(time.UTC, 2026, 12, day, 9, 0))
				l.run(notices.RunOptions{})
				for _, p := range []int64{adult, child} {
					for _, it := range l.items(p) {
						title := strings.TrimPrefix(it, "overdue/1/")
						if title != it && got[title] == 0 {
							got[title] = day
						}
					}
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("first overdue notice on day = %v, want %v", got, tc.want)
			}
		})
	}
}
