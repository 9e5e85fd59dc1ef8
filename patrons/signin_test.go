package patrons_test

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/passwords"
	"github.com/stacks-ils/stacks/patrons"
)

func TestSignIn(t *testing.T) {
	d := mustOpenDB(t)
	ctx := context.Background()
	s := patrons.NewSignIn(d)
	p1 := mustFindByCard(t, d, "P0001")

	t.Run("OK", func(t *testing.T) {
		id, err := s.Authenticate(ctx, " p0001 ", "1234", "10.0.0.1")
		if err != nil || id != p1.ID {
			t.Fatalf("sign in: %d, %v", id, err)
		}
	})
	t.Run("ErrSameAnswer", func(t *testing.T) {
		_, wrong := s.Authenticate(ctx, "P0002", "9999", "10.0.0.2")
		_, unknown := s.Authenticate(ctx, "NOSUCHCARD", "1234", "10.0.0.2")
		if wrong != patrons.ErrSignIn || unknown != patrons.ErrSignIn {
			t.Errorf("wrong PIN %v, unknown card %v: want ErrSignIn for both", wrong, unknown)
		}
		// A card no patron can have (a NUL byte, which PostgreSQL refuses in
		// text): the same answer, not an internal error.
		for _, card := range []string{"P0001\x00", "\x00", "P0 001"} {
			if _, err := s.Authenticate(ctx, card, "1234", "10.0.0.2"); err != patrons.ErrSignIn {
				t.Errorf("impossible card %q: %v, want ErrSignIn", card, err)
			}
		}
		_, noPIN := s.Authenticate(ctx, "P0002", "", "10.0.0.2")
		if stacks.ErrorCode(noPIN) != stacks.EINVALID {
			t.Errorf("no PIN: %v", noPIN)
		}
	})
	t.Run("ErrLocked", func(t *testing.T) {
		for i := range 5 {
			if _, err := s.Authenticate(ctx, "P0003", "000"+strconv.Itoa(i), "10.0.0.3"); err != patrons.ErrSignIn {
				t.Fatalf("guess %d: %v", i, err)
			}
		}
		before := passwords.Comparisons()
		_, err := s.Authenticate(ctx, "P0003", "1234", "10.0.0.4")
		if stacks.ErrorCode(err) != stacks.ETOOMANY {
			t.Fatalf("locked card, right PIN: %v", err)
		}
		if passwords.Comparisons() != before {
			t.Error("a locked card's PIN was compared")
		}
		// Staff accounts' and desk addresses' keys are not touched: the
		// patrons' keys are their own.
		var n int
		read(t, d, func(tx *db.Tx) error {
			return tx.QueryRow(`SELECT count(*) FROM login_throttle WHERE key LIKE 'user:%' OR key LIKE 'addr:%'`).Scan(&n)
		})
		if n != 0 {
			t.Errorf("%d staff throttle rows written by patrons' sign-ins", n)
		}
	})
	t.Run("ParallelGuessesCounted", func(t *testing.T) {
		// Twenty guesses at once for one card: every one is counted before it is
		// compared, so the lock holds however many arrive together.
		before := passwords.Comparisons()
		var wg sync.WaitGroup
		for i := range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s.Authenticate(ctx, "P0004", "9"+strconv.Itoa(i), "10.0.0.5")
			}()
		}
		wg.Wait()
		var failures int
		read(t, d, func(tx *db.Tx) error {
			return tx.QueryRow(`SELECT failures FROM login_throttle WHERE key = 'card:P0004'`).Scan(&failures)
		})
		if failures > 5 {
			t.Errorf("%d guesses counted for one card, want at most 5", failures)
		}
		// What was compared, not only what was counted: at least one guess,
		// at most the five the lock allows.
		if n := passwords.Comparisons() - before; n < 1 || n > 5 {
			t.Errorf("%d PINs compared for twenty guesses at one card, want 1 to 5", n)
		}
	})
	t.Run("CheckCurrentPIN", func(t *testing.T) {
		if err := s.CheckCurrentPIN(ctx, p1.ID, "1234", "10.0.0.6"); err != nil {
			t.Errorf("right PIN: %v", err)
		}
		if err := s.CheckCurrentPIN(ctx, p1.ID, "4321", "10.0.0.6"); stacks.ErrorField(err) != "current" {
			t.Errorf("wrong PIN: %v", err)
		}
	})
	t.Run("LockEnds", func(t *testing.T) {
		d.Now = func() time.Time { return testNow.Add(16 * time.Minute) }
		defer func() { d.Now = func() time.Time { return testNow } }()
		if _, err := s.Authenticate(ctx, "P0003", "1234", "10.0.0.3"); err != nil {
			t.Errorf("after the lockout: %v", err)
		}
	})
}
