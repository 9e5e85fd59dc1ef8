package passwords_test

import (
	"context"
	"os"
	"testing"
	"time"

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
	now := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
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
