package sip_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/dbtest"
	"github.com/stacks-ils/stacks/passwords"
	"github.com/stacks-ils/stacks/sip"
)

// loginFrom sends a login for kiosk with password on rc and returns the answer.
func loginFrom(rc *rawConn, password string) string {
	rc.t.Helper()
	rc.write("9300CNkiosk|CO" + password + "|CPCEN|\r")
	return strings.TrimSuffix(rc.read('\r'), "\r")
}

// TestLoginGuessesRotatingAddresses reproduces a SIP password guessed by rotating
// the source address: the lockout counted failures per account and exact address,
// so four guesses from each of many loopback addresses (below the five that lock
// an address) were all compared, and the right password, from yet another
// address, logged in. Now the addresses an account has not logged in from share
// one budget of AccountLoginLimit failures an hour: the rest of the guesses are
// refused uncompared, the right password from a new address too, and the
// terminal that logged in before (a known address) logs in all through the
// attack.
func TestLoginGuessesRotatingAddresses(t *testing.T) {
	const addrs, perAddr = 40, 4
	e := newEnv(t)
	// The real terminal has logged in from 127.0.0.1 before.
	if got := loginFrom(e.rawFrom("127.0.0.1"), "kiosk"); got != "941" {
		t.Fatalf("the terminal's first login: %q", got)
	}
	base := passwords.Comparisons()
	for a := range addrs {
		ip := fmt.Sprintf("127.0.0.%d", a+2)
		// Two guesses a connection: the third failure would close it.
		var rc *rawConn
		for g := range perAddr {
			if g%2 == 0 {
				rc = e.rawFrom(ip)
			}
			if got := loginFrom(rc, fmt.Sprint("guess", a, "-", g)); got != "940" {
				t.Fatalf("guess %d from %s: %q", g, ip, got)
			}
		}
		if a == addrs/2 {
			if got := loginFrom(e.rawFrom("127.0.0.1"), "kiosk"); got != "941" {
				t.Fatalf("the terminal during the attack: %q, want 941", got)
			}
		}
	}
	compared := passwords.Comparisons() - base
	if compared > sip.AccountLoginLimit+1 { // +1: the terminal's login during the attack
		t.Errorf("%d of %d guesses from %d addresses compared, want at most %d", compared-1, addrs*perAddr, addrs, sip.AccountLoginLimit)
	}
	if got := loginFrom(e.rawFrom("127.0.0.200"), "kiosk"); got != "940" {
		t.Errorf("the right password from another new address after the attack: %q, want 940 (the account's budget is spent)", got)
	}
	if got := loginFrom(e.rawFrom("127.0.0.1"), "kiosk"); got != "941" {
		t.Errorf("the terminal after the attack: %q, want 941", got)
	}
	// What staff see on the SIP accounts page: the account's budget locked, for
	// the addresses it has not logged in from.
	if got := e.queryString(`SELECT CASE WHEN locked_until > ? THEN 'locked' ELSE 'open' END FROM login_throttle WHERE key = 'login:kiosk'`,
		db.FormatTime(dbtest.Monday)); got != "locked" {
		t.Errorf("the account's budget row: %q, want locked", got)
	}
	var budget []sip.Lockout
	err := e.d.Read(context.Background(), func(tx *db.Tx) (err error) {
		budget, err = sip.ListLockouts(tx)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	listed := false
	for _, l := range budget {
		if l.Key == "login:kiosk" {
			listed = l.Kind == "login" && l.Subject == "kiosk" && l.Address == "" && l.Locked(dbtest.Monday)
		}
	}
	if !listed {
		t.Errorf("the account's budget as listed: %+v, want login:kiosk locked with no address", budget)
	}
	if got := e.queryString(`SELECT count(*) FROM signin_addresses WHERE key = 'sip:kiosk|127.0.0.1'`); got != "1" {
		t.Errorf("the terminal's address known: %s rows, want 1", got)
	}
}

// TestConnectionsSharedFairly reproduces the connection cap filled from a few
// addresses: with every place taken by connections that never log in (each
// reopened when the login timeout closes it), a kiosk at another address could
// not connect at all. Now a full server gives a newcomer under its share the
// place of the oldest connection not logged in of the address with the most,
// and never closes a connection that logged in.
func TestConnectionsSharedFairly(t *testing.T) {
	const maxConns, perAddr = 12, 4
	e := newEnvWith(t, envOptions{demo: smallDemo, config: sip.Config{MaxConns: maxConns, MaxConnsPerAddr: perAddr}})
	// Terminals that logged in: never closed for another.
	var terminals []*rawConn
	for range perAddr {
		rc := e.rawFrom("127.0.1.10")
		if got := loginFrom(rc, "kiosk"); got != "941" {
			t.Fatalf("terminal login: %q", got)
		}
		terminals = append(terminals, rc)
	}
	// Two addresses fill the rest and send nothing.
	idle := map[string][]*rawConn{}
	for _, ip := range []string{"127.0.1.1", "127.0.1.2"} {
		for range perAddr {
			idle[ip] = append(idle[ip], e.rawFrom(ip))
		}
	}
	// Connections are accepted in the order they were made: the server is full.
	kiosk := e.rawFrom("127.0.1.20")
	if got := loginFrom(kiosk, "kiosk"); got != "941" {
		t.Fatalf("a kiosk at a new address on a full server: %q, want 941", got)
	}
	kiosk.write("9900302.00\r")
	if got := kiosk.read('\r'); !strings.HasPrefix(got, "98") {
		t.Fatalf("the kiosk's status: %q", got)
	}
	// The place taken was the oldest idle connection of the first address with
	// the most (both have 4; the older connection goes).
	if !idle["127.0.1.1"][0].closed(3 * time.Second) {
		t.Error("the oldest idle connection of 127.0.1.1 is still open; want it closed for the kiosk")
	}
	for i, rc := range terminals {
		rc.write("9900302.00\r")
		if got := rc.read('\r'); !strings.HasPrefix(got, "98") {
			t.Errorf("terminal %d after the kiosk came: %q", i, got)
		}
	}
	// The address that lost a place is at its share (12 / 4 addresses): it
	// gets no other place back.
	if again := e.rawFrom("127.0.1.1"); !again.closed(3 * time.Second) {
		t.Error("127.0.1.1 at its share on a full server was served again; want it refused")
	}
	for _, rc := range idle["127.0.1.2"] {
		if rc.closed(50 * time.Millisecond) {
			t.Error("an idle connection of 127.0.1.2 was closed; want only one closed, of 127.0.1.1")
		}
	}
	// A server full of connections that logged in refuses a newcomer.
	t.Run("AllLoggedIn", func(t *testing.T) {
		e := newEnvWith(t, envOptions{demo: smallDemo, config: sip.Config{MaxConns: 4, MaxConnsPerAddr: 4}})
		var logged []*rawConn
		for range 4 {
			rc := e.rawFrom("127.0.2.1")
			if got := loginFrom(rc, "kiosk"); got != "941" {
				t.Fatalf("login: %q", got)
			}
			logged = append(logged, rc)
		}
		if rc := e.rawFrom("127.0.2.2"); !rc.closed(3 * time.Second) {
			t.Error("a newcomer on a server full of logged-in connections was served")
		}
		for i, rc := range logged {
			rc.write("9900302.00\r")
			if got := rc.read('\r'); !strings.HasPrefix(got, "98") {
				t.Errorf("logged-in connection %d: %q", i, got)
			}
		}
	})
}
