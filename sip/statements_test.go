package sip_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/sip"
)

// TestThrottleStatements pins the SQL statements of the messages the throttle
// counts: a login and a PIN are counted in one statement that refuses a locked
// key, a login reads its locks and whether its address is known in one more,
// and a PIN reads nothing before it is counted (its keys do not depend on the
// address). A PIN refused by its lockout costs one statement more than a wrong
// one: the count leaves the locked key alone, and the lockout is read to say so.
func TestThrottleStatements(t *testing.T) {
	var (
		mu   sync.Mutex
		last int64
	)
	observe := func(req, resp []byte, took time.Duration, stats *db.Stats) {
		mu.Lock()
		defer mu.Unlock()
		last = stats.Statements()
	}
	e := newEnvWith(t, envOptions{demo: smallDemo, config: sip.Config{Observe: observe}})
	e.client().Close() // the address is known for kiosk from now on
	statements := func(what string, want int64, c *sip.Client, msg, answer string) {
		t.Helper()
		if r := send(t, c, msg); !strings.Contains(r, answer) {
			t.Fatalf("%s: %s, want %s in it", what, r, answer)
		}
		mu.Lock()
		defer mu.Unlock()
		if last != want {
			t.Errorf("%s: %d statements, want %d", what, last, want)
		}
	}
	c := e.dial()
	statements("login from a known address", 7, c, "9300CNkiosk|COkiosk|CPCEN|", "941")
	other := e.dial()
	statements("failed login", 4, other, "9300CNkiosk|COwrong|CPCEN|", "940")
	statements("right PIN", 9, c, "23001"+sipNow+"AOCEN|AAP0001|AC|AD1234|", "|CQY|")
	statements("wrong PIN", 6, c, "23001"+sipNow+"AOCEN|AAP0003|AC|AD0000|", "|CQN|")
	for range sip.PINLimit - 1 { // the last of these locks the PIN
		send(t, c, "23001"+sipNow+"AOCEN|AAP0003|AC|AD0000|")
	}
	statements("locked PIN", 7, c, "23001"+sipNow+"AOCEN|AAP0003|AC|AD0000|", "Too many wrong PINs")
}
