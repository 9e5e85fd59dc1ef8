package passwords_test

import (
	"context"
	"testing"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/dbtest"
	"github.com/stacks-ils/stacks/passwords"
)

// TestLimiterOwnKeys: an attempt counted under keys of its caller's choosing
// (SIP2's), each with its own budget. The attempt that reaches a key's limit
// locks it and says until when (Lockouts, which SIP2 notes for the check
// without the database); the next is refused, uncounted, naming the key, and
// so is one the counting statement refuses without a read before. An attempt never compared gives back
// its count and the lockout it set; a success forgets the keys that forget and
// takes one attempt off the others. Staff list and lift rows by prefix, and the
// daily sweep deletes the rows of every site whose window and lockout are over.
func TestLimiterOwnKeys(t *testing.T) {
	ctx := context.Background()
	d := dbtest.Open(t, db.Options{})
	now := dbtest.Monday
	d.Now = func() time.Time { return now }
	l := &passwords.Limiter{Words: passwords.Words{Account: "this account", Failures: "failures", Ask: "ask"}}
	perAddr := passwords.Budget{Max: 2, Window: 15 * time.Minute, Lockout: 15 * time.Minute}
	shared := passwords.Budget{Max: 3, Window: time.Hour, Lockout: time.Hour}
	keys := func(bool) []passwords.Counted {
		return []passwords.Counted{{Key: "t:a", Budget: perAddr, Forget: true}, {Key: "t:b", Budget: shared}}
	}
	l.Keys = func(string, string, bool) []passwords.Counted { return keys(false) }
	count := func() (*passwords.Attempt, error) {
		t.Helper()
		var a *passwords.Attempt
		err := d.Write(ctx, func(tx *db.Tx) (err error) {
			if a, err = l.Begin(tx, "t:a", "", "10.0.0.1"); err != nil {
				return err
			}
			return a.Count(tx)
		})
		return a, err
	}
	failures := func(key string) int {
		t.Helper()
		n := -1
		err := d.Read(ctx, func(tx *db.Tx) error {
			rows, err := passwords.ListLocks(tx, now.Add(-time.Hour), 10, "t:", "u:")
			for _, r := range rows {
				if r.Key == key {
					n = r.Failures
				}
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	write := func(f func(tx *db.Tx) error) {
		t.Helper()
		if err := d.Write(ctx, f); err != nil {
			t.Fatal(err)
		}
	}

	first, err := count()
	if err != nil || len(first.Lockouts()) != 0 {
		t.Fatalf("the first attempt: %v, locked %v", err, first.Lockouts())
	}
	second, err := count()
	if err != nil || len(second.Lockouts()) != 1 || !second.Lockouts()["t:a"].Equal(now.Add(15*time.Minute)) || second.Refused() != "" {
		t.Fatalf("the second attempt: %v, locked %v; want t:a locked for 15 minutes alone", err, second.Lockouts())
	}
	third, err := count()
	if stacks.ErrorCode(err) != stacks.ETOOMANY || third == nil || third.Refused() != "t:a" {
		t.Fatalf("the third attempt: %v, want ETOOMANY refused by t:a", err)
	}
	if len(third.Lockouts()) != 1 || !third.Lockouts()["t:a"].Equal(now.Add(15*time.Minute)) {
		t.Errorf("the third attempt's lockouts: %v, want t:a's", third.Lockouts())
	}
	// Another process's attempt, begun without reading (a PIN's), is refused
	// by the counting statement, which takes back what it counted under t:b,
	// and tells the lockout it is refused by.
	other := &passwords.Limiter{Words: l.Words, Keys: l.Keys}
	var fourth *passwords.Attempt
	err = d.Write(ctx, func(tx *db.Tx) error {
		var err error
		if fourth, err = other.Begin(nil, "t:a", "", "10.0.0.2"); err != nil {
			return err
		}
		return fourth.Count(tx)
	})
	if stacks.ErrorCode(err) != stacks.ETOOMANY || fourth.Refused() != "t:a" || !fourth.Lockouts()["t:a"].Equal(now.Add(15*time.Minute)) {
		t.Errorf("another process's attempt: %v, refused by %q, %v; want ETOOMANY by t:a", err, fourth.Refused(), fourth.Lockouts())
	}
	if a, b := failures("t:a"), failures("t:b"); a != 2 || b != 2 {
		t.Errorf("after a refusal: %d and %d failures, want 2 and 2 (the refused attempt uncounted)", a, b)
	}

	// The second was never compared: its count and its lockout go.
	write(second.NotCompared)
	if a, b := failures("t:a"), failures("t:b"); a != 1 || b != 1 {
		t.Errorf("after giving one back: %d and %d failures, want 1 and 1", a, b)
	}
	again, err := count()
	if _, locked := again.Lockouts()["t:a"]; err != nil || !locked {
		t.Fatalf("counted again: %v, locked %v; want t:a locked", err, again.Lockouts())
	}
	// A success forgets t:a and takes itself off t:b only.
	write(again.Succeeded)
	if a, b := failures("t:a"), failures("t:b"); a != -1 || b != 1 {
		t.Errorf("after a success: %d and %d failures, want no row and 1", a, b)
	}
	// Given back to nothing, a count is no row.
	write(first.NotCompared)
	if b := failures("t:b"); b != -1 {
		t.Errorf("t:b given back to nothing: %d failures, want no row", b)
	}

	// Lift: a lockout lifted is no longer read.
	for range 2 {
		if _, err := count(); err != nil {
			t.Fatal(err)
		}
	}
	isLocked := func(tx *db.Tx) bool {
		locks, err := passwords.ReadLocks(tx, "", "", "t:a")
		if err != nil {
			t.Fatal(err)
		}
		return now.Before(locks.Until["t:a"])
	}
	var locked bool
	write(func(tx *db.Tx) (err error) {
		if locked = isLocked(tx); !locked {
			return nil
		}
		if ok, err := passwords.Lift(tx, "t:a"); err != nil || !ok {
			t.Errorf("lift: %v, %v", ok, err)
		}
		if ok, _ := passwords.Lift(tx, "t:a"); ok {
			t.Error("lifted twice")
		}
		locked = isLocked(tx)
		return nil
	})
	if locked {
		t.Error("after lifting: still locked")
	}

	// A day on, the daily sweep deletes the rows of every site whose count
	// and lockout are over (t:b, staff's u:x), and keeps a count running (t:z)
	// and a lockout running (u:l).
	write(func(tx *db.Tx) error {
		_, err := tx.Exec(`INSERT INTO login_throttle (key, failures, first_at, locked_until) VALUES ('u:x', 1, ?1, NULL), ('u:l', 5, ?1, ?2)`,
			db.FormatTime(now), db.FormatTime(now.Add(48*time.Hour)))
		return err
	})
	now = now.Add(passwords.SweepAfter + time.Minute)
	keys = func(bool) []passwords.Counted { return []passwords.Counted{{Key: "t:z", Budget: perAddr}} }
	if _, err := count(); err != nil {
		t.Fatal(err)
	}
	if n, err := passwords.Sweep(ctx, d); err != nil || n != 2 {
		t.Errorf("swept %d rows (%v), want 2", n, err)
	}
	if left := throttleKeys(t, d); len(left) != 2 || left[0] != "t:z" || left[1] != "u:l" {
		t.Errorf("after the sweep: %v, want [t:z u:l]", left)
	}
}

// TestLimiterGates: an attempt of one key (a SIP2 PIN) waits for its turn
// under the in-flight limit its Limiter's Keys give: a second attempt under a
// limit of one, with no room to wait, is refused busy (Words.Busy) until the
// first is done.
func TestLimiterGates(t *testing.T) {
	ctx := context.Background()
	d := dbtest.Open(t, db.Options{})
	l := &passwords.Limiter{Throttle: passwords.Throttle{InFlightWait: time.Second},
		Words: passwords.Words{Account: "this patron", Failures: "failures", Ask: "ask", Busy: passwords.ErrBusy}}
	l.Keys = func(key, _ string, _ bool) []passwords.Counted {
		return []passwords.Counted{{Key: key, Budget: passwords.Budget{Max: 3, Window: time.Minute, Lockout: time.Minute}, InFlight: 1}}
	}
	begin := func() *passwords.Attempt {
		t.Helper()
		var a *passwords.Attempt
		if err := d.Read(ctx, func(tx *db.Tx) (err error) {
			a, err = l.Begin(tx, "p:1", "", "10.0.0.1")
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return a
	}
	first, second := begin(), begin()
	if err := first.Wait(ctx); err != nil {
		t.Fatalf("the first attempt's turn: %v", err)
	}
	if err := second.Wait(ctx); err != passwords.ErrBusy {
		t.Errorf("the second attempt while the first is checked: %v, want ErrBusy", err)
	}
	first.Done()
	if err := second.Wait(ctx); err != nil {
		t.Errorf("the second attempt after the first: %v", err)
	}
	second.Done()
}

// TestSweepInBatches: a flood of names tried is swept in full, a bounded batch
// a transaction, and a count still in its window is kept.
func TestSweepInBatches(t *testing.T) {
	ctx := context.Background()
	d := dbtest.Open(t, db.Options{})
	now := dbtest.Monday
	d.Now = func() time.Time { return now }
	if err := d.Write(ctx, func(tx *db.Tx) error {
		_, err := tx.Exec(`INSERT INTO login_throttle (key, failures, first_at, locked_until)
			WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 2345)
			SELECT 'user:tried' || x, 1, ?, NULL FROM c`, db.FormatTime(now.Add(-passwords.SweepAfter-time.Hour)))
		if err != nil {
			return err
		}
		_, err = tx.Exec(`INSERT INTO login_throttle (key, failures, first_at, locked_until) VALUES ('user:recent', 1, ?, NULL)`, db.FormatTime(now))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if n, err := passwords.Sweep(ctx, d); err != nil || n != 2345 {
		t.Errorf("swept %d rows (%v), want 2345", n, err)
	}
	left := throttleKeys(t, d)
	if len(left) != 1 || left[0] != "user:recent" {
		t.Errorf("left %q, want the recent count only", left)
	}
}

// throttleKeys lists the keys of login_throttle, in order.
func throttleKeys(t *testing.T, d *db.DB) []string {
	t.Helper()
	var left []string
	if err := d.Read(context.Background(), func(tx *db.Tx) error {
		rows, err := tx.Query(`SELECT key FROM login_throttle ORDER BY key`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var k string
			if err := rows.Scan(&k); err != nil {
				return err
			}
			left = append(left, k)
		}
		return rows.Err()
	}); err != nil {
		t.Fatal(err)
	}
	return left
}
