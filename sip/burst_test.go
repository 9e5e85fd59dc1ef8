package sip_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/passwords"
	"github.com/stacks-ils/stacks/sip"
	"github.com/stacks-ils/stacks/waittest"
)

// burstCost is the bcrypt cost of the secrets a burst guesses: comparisons must
// take long enough (about 8 ms here, a few hundred under the race detector) for
// the guesses to overlap, as the real cost's 50 to 100 ms make them do.
const burstCost = 7

// rehash stores secret hashed at burstCost with query (one ? for the hash).
func (e *env) rehash(query, secret string) {
	e.tb.Helper()
	h, err := bcrypt.GenerateFromPassword([]byte(secret), burstCost)
	if err != nil {
		e.tb.Fatal(err)
	}
	err = e.d.Write(context.Background(), func(tx *db.Tx) error {
		_, err := tx.Exec(query, string(h))
		return err
	})
	if err != nil {
		e.tb.Fatal(err)
	}
}

// burst sends msg(i) on each of conns at once and returns the answers. msg may
// wait before it returns.
func burst(t *testing.T, conns []*sip.Client, msg func(i int) string) []string {
	t.Helper()
	resps := make([]string, len(conns))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, c := range conns {
		wg.Go(func() {
			<-start
			m := msg(i)
			resp, err := c.Send(m)
			if err != nil {
				t.Errorf("%d %s: %v", i, m, err)
			}
			resps[i] = resp
		})
	}
	close(start)
	wg.Wait()
	return resps
}

// comparedSince waits until more than base comparisons have started.
func comparedSince(t *testing.T, base int64) {
	if !waittest.Eventually(func() bool { return passwords.Comparisons() > base }) {
		t.Error("no guess of the burst was compared")
	}
}

// TestLoginBurst: 100 SIP2 logins sent at once for one account from one
// address. Each login is counted before its password is compared and one per
// account and address is checked at a time: at most five are compared, where
// comparing them all at once would compare 99 wrong passwords and accept the
// right one.
func TestLoginBurst(t *testing.T) {
	const n, limit = 100, 5
	setup := func(t *testing.T) (*env, []*sip.Client) {
		// The per-address connection cap would refuse most of the burst first:
		// lift it, to test the login throttle alone.
		e := newEnvWith(t, envOptions{demo: smallDemo, config: sip.Config{MaxConnsPerAddr: 4 * n}})
		e.rehash(`UPDATE sip_accounts SET password_hash = ? WHERE username = 'kiosk'`, "kiosk")
		conns := make([]*sip.Client, n)
		for i := range conns {
			conns[i] = e.dial()
		}
		return e, conns
	}

	t.Run("Wrong", func(t *testing.T) {
		_, conns := setup(t)
		base := passwords.Comparisons()
		resps := burst(t, conns, func(i int) string { return sip.LoginMessage("kiosk", fmt.Sprint("guess", i), "") })
		if got := passwords.Comparisons() - base; got < 1 || got > limit {
			t.Errorf("%d of %d parallel logins compared, want 1 to %d", got, n, limit)
		}
		for i, r := range resps {
			if r != "940" {
				t.Fatalf("guess %d: %q, want 940", i, r)
			}
		}
	})

	t.Run("RightPasswordInBurst", func(t *testing.T) {
		e, conns := setup(t)
		for i := range limit - 1 {
			if r := send(t, e.dial(), sip.LoginMessage("kiosk", fmt.Sprint("before", i), "")); r != "940" {
				t.Fatalf("failure %d: %q", i+1, r)
			}
		}
		base := passwords.Comparisons()
		right := n - 1
		resps := burst(t, conns, func(i int) string {
			if i != right {
				return sip.LoginMessage("kiosk", fmt.Sprint("guess", i), "")
			}
			comparedSince(t, base)
			return sip.LoginMessage("kiosk", "kiosk", "")
		})
		if got := passwords.Comparisons() - base; got > 1 {
			t.Errorf("%d logins of the burst compared after %d failures, want at most 1", got, limit-1)
		}
		if resps[right] != "940" {
			t.Errorf("the right password, sent last in the burst: %q, want 940", resps[right])
		}
		if err := e.dial().Login("kiosk", "kiosk", ""); err == nil {
			t.Error("the right password after the burst logged in; want the account locked")
		}
	})
}

// TestPINBurst: 100 patron status requests sent at once for one patron. Each
// PIN is counted before it is compared and one per patron is checked at a time:
// at most ten are compared, and the right one sent in the burst is refused.
// Compared all at once, 99 wrong PINs would be, and a four-digit PIN would fall
// in about 40 bursts instead of about 1,000 lockout windows.
func TestPINBurst(t *testing.T) {
	const n, limit = 100, 10
	msg := func(pin string) string { return "23001" + sipNow + "AOCEN|AAP0001|AC|AD" + pin + "|" }
	setup := func(t *testing.T) (*env, []*sip.Client) {
		e := newEnvWith(t, envOptions{demo: smallDemo, config: sip.Config{MaxConnsPerAddr: 4 * n}})
		e.rehash(`UPDATE patrons SET pin_hash = ? WHERE card = 'P0001'`, "1234")
		conns := make([]*sip.Client, n)
		for i := range conns {
			conns[i] = e.client()
		}
		return e, conns
	}

	t.Run("Wrong", func(t *testing.T) {
		_, conns := setup(t)
		base := passwords.Comparisons()
		resps := burst(t, conns, func(i int) string { return msg(fmt.Sprintf("%04d", 5000+i)) })
		if got := passwords.Comparisons() - base; got < 1 || got > limit {
			t.Errorf("%d of %d parallel PINs compared, want 1 to %d", got, n, limit)
		}
		for i, r := range resps {
			if !strings.HasPrefix(r, "24") || !strings.Contains(r, "|CQN|") {
				t.Fatalf("guess %d: %q, want a 24 with CQN", i, r)
			}
		}
	})

	t.Run("RightPINInBurst", func(t *testing.T) {
		e, conns := setup(t)
		c := e.client()
		for i := range limit - 1 {
			if r := send(t, c, msg(fmt.Sprintf("%04d", 9000+i))); !strings.Contains(r, "|CQN|") {
				t.Fatalf("wrong PIN %d: %s", i+1, r)
			}
		}
		base := passwords.Comparisons()
		right := n - 1
		resps := burst(t, conns, func(i int) string {
			if i != right {
				return msg(fmt.Sprintf("%04d", 5000+i))
			}
			comparedSince(t, base)
			return msg("1234")
		})
		if got := passwords.Comparisons() - base; got > 1 {
			t.Errorf("%d PINs of the burst compared after %d wrong ones, want at most 1", got, limit-1)
		}
		if !strings.Contains(resps[right], "|CQN|") {
			t.Errorf("the right PIN, sent last in the burst: %s, want CQN", resps[right])
		}
		if r := send(t, e.client(), msg("1234")); !strings.Contains(r, "Too many wrong PINs") {
			t.Errorf("the right PIN after the burst: %s, want it locked", r)
		}
	})
}
