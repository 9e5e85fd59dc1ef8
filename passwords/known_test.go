package passwords_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/dbtest"
	"github.com/stacks-ils/stacks/passwords"
)

func TestMain(m *testing.M) { os.Exit(dbtest.Main(m)) }

// TestKnownAddresses: a sign-in remembers its address for the account;
// ReadLocks tells it, with the lockouts of the keys asked for, in one statement;
// after KnownFor without a sign-in the address is known no longer, and the
// daily job deletes it.
func TestKnownAddresses(t *testing.T) {
	ctx := context.Background()
	d := dbtest.Open(t, db.Options{})
	now := dbtest.Monday
	d.Now = func() time.Time { return now }
	read := func(account, addr string) passwords.Locks {
		t.Helper()
		var l passwords.Locks
		err := d.Read(ctx, func(tx *db.Tx) error {
			var err error
			l, err = passwords.ReadLocks(tx, account, addr, "user:ann", "addr:10.0.0.1")
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	err := d.Write(ctx, func(tx *db.Tx) error {
		if err := passwords.RememberAddress(tx, "staff:ann", "10.0.0.1"); err != nil {
			return err
		}
		_, err := tx.Exec(`INSERT INTO login_throttle (key, failures, first_at, locked_until) VALUES ('user:ann', 5, ?, ?)`,
			db.FormatTime(now), db.FormatTime(now.Add(15*time.Minute)))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	l := read("staff:ann", "10.0.0.1")
	if !l.Known || !l.Until["user:ann"].Equal(now.Add(15*time.Minute)) || len(l.Until) != 1 {
		t.Errorf("after a sign-in from 10.0.0.1: %+v, want known and user:ann locked", l)
	}
	if l := read("staff:ann", "10.0.0.2"); l.Known {
		t.Error("another address is known")
	}
	if l := read("staff:bob", "10.0.0.1"); l.Known {
		t.Error("another account is known at the address")
	}
	if l := read("", "10.0.0.1"); l.Known {
		t.Error("no account asked for, yet known")
	}
	now = now.Add(passwords.KnownFor + time.Hour)
	if l := read("staff:ann", "10.0.0.1"); l.Known {
		t.Errorf("known %v after the last sign-in", passwords.KnownFor+time.Hour)
	}
	n, err := passwords.ForgetOldAddresses(ctx, d)
	if err != nil || n != 1 {
		t.Errorf("ForgetOldAddresses: %d, %v; want 1 deleted", n, err)
	}
}

// TestLimiter: every attempt is counted before it is compared; the one that
// reaches MaxFailures is still let through, the next is refused in the
// Limiter's words; a success from a known address forgets the account's
// failures there, and a success remembers its address.
func TestLimiter(t *testing.T) {
	ctx := context.Background()
	d := dbtest.Open(t, db.Options{})
	now := dbtest.Monday
	d.Now = func() time.Time { return now }
	busy := stacks.Errorf(stacks.ETOOMANY, "busy")
	l := &passwords.Limiter{Throttle: passwords.DefaultThrottle,
		Words: passwords.Words{AddrPrefix: "test:", Account: "this test", Failures: "failures", Ask: "ask", Busy: busy}}
	// attempt counts an attempt of account from addr and, if succeed, takes it back.
	attempt := func(addr string, succeed bool) error {
		t.Helper()
		var a *passwords.Attempt
		if err := d.Read(ctx, func(tx *db.Tx) (err error) {
			a, err = l.Begin(tx, "user:ann", "staff:ann", addr)
			return err
		}); err != nil {
			return err
		}
		if err := a.Wait(ctx); err != nil {
			return err
		}
		defer a.Done()
		if err := d.Write(ctx, a.Count); err != nil {
			return err
		}
		if succeed {
			return d.Write(ctx, a.Succeeded)
		}
		return nil
	}
	if err := attempt("10.0.0.1", true); err != nil {
		t.Fatal(err)
	}
	limit := passwords.DefaultThrottle.MaxFailures
	for i := range limit {
		if err := attempt("10.0.0.1", false); err != nil {
			t.Fatalf("failure %d of %d: %v", i+1, limit, err)
		}
	}
	err := attempt("10.0.0.1", false)
	if stacks.ErrorCode(err) != stacks.ETOOMANY || !strings.Contains(stacks.ErrorMessage(err), "Too many failures for this test.") {
		t.Fatalf("after %d failures from a known address: %v, want the Limiter's refusal", limit, err)
	}
	// Another address shares the account's budget for unknown addresses, not
	// the known address's count.
	if err := attempt("10.0.0.2", true); err != nil {
		t.Errorf("a new address, while the known one is locked: %v", err)
	}
	now = now.Add(passwords.DefaultThrottle.Lockout + time.Second)
	if err := attempt("10.0.0.1", true); err != nil {
		t.Errorf("after the lockout: %v", err)
	}
}
