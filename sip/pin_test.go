package sip_test

import (
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/stacks-ils/stacks/db/dbtest"
	"github.com/stacks-ils/stacks/demo"
	"github.com/stacks-ils/stacks/passwords"
	"github.com/stacks-ils/stacks/sip"
	"github.com/stacks-ils/stacks/waittest"
)

// slowSecret is a bcrypt hash of "secret" at cost 11 (a tenth of a second or
// more; seconds under the race detector), written here because making it costs
// as much as comparing it: a comparison that holds its turn long enough for
// another check to arrive while it runs.
const slowSecret = "$2a$11$vHp/haP95M.N3e6j1n.4NeucbnqQorSRic4j4IC.d1qy6wPwacwAa"

// compared counts the comparisons f made.
func compared(t *testing.T, want int64, what string, f func()) {
	t.Helper()
	base := passwords.Comparisons()
	f()
	if got := passwords.Comparisons() - base; got != want {
		t.Errorf("%s: %d comparisons, want %d", what, got, want)
	}
}

// TestPINSessionPerPatron: a verified PIN is remembered for the patron at the
// terminal only: a message for another patron, or five minutes without one for
// the patron, and the PIN is compared again.
func TestPINSessionPerPatron(t *testing.T) {
	e := newEnv(t)
	c := e.client()
	status := func(card string) {
		t.Helper()
		if r := send(t, c, "23001"+sipNow+"AOCEN|AA"+card+"|AC|AD1234|"); !strings.Contains(r, "|CQY|") {
			t.Fatalf("%s: %s", card, r)
		}
	}
	compared(t, 1, "the first patron", func() { status("P0001") })
	compared(t, 0, "the first patron again", func() { status("P0001") })
	compared(t, 1, "the next patron", func() { status("P0003") })
	compared(t, 1, "the first patron after another", func() { status("P0001") })
	// Without a PIN, a message for another patron ends the session too.
	send(t, c, "23001"+sipNow+"AOCEN|AAP0003|AC|")
	compared(t, 1, "after a message for another patron without a PIN", func() { status("P0001") })
	e.setClock(dbtest.Monday.Add(4 * time.Minute))
	compared(t, 0, "four minutes later", func() { status("P0001") })
	e.setClock(dbtest.Monday.Add(10 * time.Minute))
	compared(t, 1, "six minutes after the last message", func() { status("P0001") })
}

// TestPINBusyIsNotWrong: a PIN that could not be checked in time (another PIN for
// the same patron held its turn past Config.CheckWait) is answered with a screen
// message that says so and without CQ, never CQN; it is not counted as an
// attempt.
func TestPINBusyIsNotWrong(t *testing.T) {
	for try := 1; try <= 3; try++ {
		e := newEnvWith(t, envOptions{demo: smallDemo, config: sip.Config{CheckWait: 20 * time.Millisecond}})
		e.exec(`UPDATE patrons SET pin_hash = ? WHERE card = 'P0001'`, slowSecret)
		slow, other := e.client(), e.client()
		// A comparison at cost 11 under the race detector, on a loaded machine,
		// may take longer than the client's default 10 s: the test is of the
		// answers, not of their time.
		slow.Timeout, other.Timeout = waittest.Limit, waittest.Limit
		base := passwords.Comparisons()
		type answer struct {
			r   string
			err error
		}
		answered := make(chan answer, 1)
		go func() {
			r, err := slow.Send("23001" + sipNow + "AOCEN|AAP0001|AC|ADsecret|")
			answered <- answer{r, err}
		}()
		comparedSince(t, base)
		busy := send(t, other, "23001"+sipNow+"AOCEN|AAP0001|AC|ADsecret|")
		first := <-answered
		if first.err != nil || !strings.Contains(first.r, "|CQY|") {
			t.Fatalf("the PIN compared first: %q, %v", first.r, first.err)
		}
		if strings.Contains(busy, "|CQY|") {
			t.Logf("try %d: the first comparison ended before the second PIN arrived", try)
			continue
		}
		if strings.Contains(busy, "|CQ") || !strings.Contains(busy, "|AFYour PIN could not be checked just now") || !strings.Contains(busy, "|BLY|") {
			t.Errorf("a PIN not checked in time: %s, want BLY, no CQ, and a screen message saying it could not be checked", busy)
		}
		if n := e.queryString(`SELECT COUNT(*) FROM login_throttle WHERE key LIKE 'pin:%'`); n != "0" {
			t.Errorf("%s PIN attempts counted after a right PIN and one not checked, want 0", n)
		}
		// Checked once the other check is over: it was not held against the patron.
		if r := send(t, other, "23001"+sipNow+"AOCEN|AAP0001|AC|ADsecret|"); !strings.Contains(r, "|CQY|") {
			t.Errorf("the same PIN sent again: %s", r)
		}
		return
	}
	t.Fatal("in three tries the first comparison always ended before the second PIN arrived")
}

// TestLoginComparedOncePerConnection: the same login sent again on a connection it
// logged in is not compared again while the account's password is unchanged.
func TestLoginComparedOncePerConnection(t *testing.T) {
	e := newEnv(t)
	c := e.dial()
	login := func(password, want string) {
		t.Helper()
		if r := send(t, c, sip.LoginMessage("kiosk", password, "CEN")); r != want {
			t.Errorf("login with %q: %s, want %s", password, r, want)
		}
	}
	compared(t, 1, "the first login", func() { login("kiosk", "941") })
	compared(t, 0, "the same login again", func() { login("kiosk", "941") })
	compared(t, 1, "a wrong password", func() { login("nope", "940") })
	compared(t, 1, "the right one after a failure", func() { login("kiosk", "941") })
	compared(t, 0, "and again", func() { login("kiosk", "941") })
	// Five wrong passwords from the address lock the account there: the
	// remembered login is refused too, uncompared.
	for range 5 {
		send(t, e.dial(), sip.LoginMessage("kiosk", "nope", "CEN"))
	}
	compared(t, 0, "the remembered login while the account is locked", func() { login("kiosk", "940") })
	e.exec(`DELETE FROM login_throttle`)
	e.rehash(`UPDATE sip_accounts SET password_hash = ? WHERE username = 'kiosk'`, "changed")
	compared(t, 1, "the old password after a change", func() { login("kiosk", "940") })
	compared(t, 1, "the new one", func() { login("changed", "941") })
	e.exec(`UPDATE sip_accounts SET active = 0 WHERE username = 'kiosk'`)
	compared(t, 1, "a deactivated account", func() { login("changed", "940") })
}

// TestLoginNotCheckedNotAnswered: a login that could not be checked in time is not
// answered (940 would say the password is wrong) and not counted as a failure:
// the terminal's next login is the next answer it reads.
func TestLoginNotCheckedNotAnswered(t *testing.T) {
	for try := 1; try <= 3; try++ {
		e := newEnvWith(t, envOptions{demo: smallDemo, config: sip.Config{CheckWait: 20 * time.Millisecond}})
		e.exec(`UPDATE sip_accounts SET password_hash = ? WHERE username = 'kiosk'`, slowSecret)
		first, second := e.dial(), e.dial()
		// A comparison at cost 11 under the race detector, on a loaded machine,
		// may take longer than the client's default 10 s: the test is of the
		// order of the answers, not of their time.
		first.Timeout, second.Timeout = waittest.Limit, waittest.Limit
		base := passwords.Comparisons()
		type answer struct {
			r   string
			err error
		}
		answered := make(chan answer, 1)
		go func() {
			r, err := first.Send(sip.LoginMessage("kiosk", "secret", "CEN"))
			answered <- answer{r, err}
		}()
		comparedSince(t, base)
		// Sent while the first is compared: it waits 20 ms at most for its turn.
		if err := second.Write(sip.LoginMessage("kiosk", "secret", "CEN")); err != nil {
			t.Fatal(err)
		}
		if a := <-answered; a.err != nil || a.r != "941" {
			t.Fatalf("the login compared first: %q, %v", a.r, a.err)
		}
		// The next answer the second terminal reads is to the login it sends now,
		// with a wrong password: 940. A 941 would answer the login sent before.
		r := send(t, second, sip.LoginMessage("kiosk", "nope", "CEN"))
		if r == "941" {
			t.Logf("try %d: the first comparison ended before the second login arrived", try)
			continue
		}
		if r != "940" {
			t.Errorf("the second terminal read %q, want 940 (its login not checked in time unanswered)", r)
		}
		if n := e.queryString(`SELECT COALESCE(SUM(failures), 0) FROM login_throttle WHERE key LIKE 'login:%'`); n != "1" {
			t.Errorf("%s failed logins counted, want 1 (the wrong password; not the login not checked)", n)
		}
		return
	}
	t.Fatal("in three tries the first comparison always ended before the second login arrived")
}

// TestRushAtOnce: a school's class at the terminals. Fifty patrons at fifty
// terminals send their PINs at the same moment while twenty more terminals log
// in: every check waits its turn and is answered (CQY, 941); none is refused,
// though the comparison pool has one slot per two CPUs (a pool that let eight
// wait would refuse the rest: "PIN could not be checked", 940).
func TestRushAtOnce(t *testing.T) {
	const patrons, logins = 50, 20
	e := newEnvWith(t, envOptions{demo: demo.Options{Titles: 50, Patrons: 60}, config: sip.Config{MaxConnsPerAddr: 2 * (patrons + logins)}})
	// bcrypt at cost 4 keeps the test quick under the race detector; what is
	// tested is that every check gets its turn.
	h, err := bcrypt.GenerateFromPassword([]byte("1234"), 4)
	if err != nil {
		t.Fatal(err)
	}
	e.exec(`UPDATE patrons SET pin_hash = ?`, string(h))
	e.exec(`UPDATE sip_accounts SET password_hash = ?`, string(h))
	cards := queryRows(t, e.d, `SELECT card FROM patrons ORDER BY card LIMIT ?`, patrons)
	if len(cards) != patrons {
		t.Fatalf("%d patrons", len(cards))
	}
	terms := make([]*sip.Client, patrons)
	for i := range terms {
		terms[i] = e.dial()
		if r := send(t, terms[i], sip.LoginMessage("kiosk", "1234", "CEN")); r != "941" {
			t.Fatalf("login %d: %s", i, r)
		}
	}
	fresh := make([]*sip.Client, logins)
	for i := range fresh {
		fresh[i] = e.dial()
	}
	all := append(append([]*sip.Client(nil), terms...), fresh...)
	base := passwords.Comparisons()
	resps := burst(t, all, func(i int) string {
		if i < patrons {
			return "23001" + sipNow + "AOCEN|AA" + strings.TrimPrefix(cards[i], "card=") + "|AC|AD1234|"
		}
		return sip.LoginMessage("kiosk", "1234", "CEN")
	})
	for i, r := range resps {
		if i < patrons && !strings.Contains(r, "|CQY|") || i >= patrons && r != "941" {
			t.Errorf("terminal %d: %s", i, r)
		}
	}
	if got := passwords.Comparisons() - base; got != patrons+logins {
		t.Errorf("%d comparisons, want %d", got, patrons+logins)
	}
}

// TestStatusScreenMessages: patron status (23) and patron information (63) say in
// the screen message (AF) every block their flags report: fines over the limit,
// an expired card, a block by staff, a card reported lost, the loan limit.
func TestStatusScreenMessages(t *testing.T) {
	e := newEnv(t)
	c := e.client()
	e.exec(`UPDATE patrons SET card_lost = 1 WHERE card = 'P0003'`)
	e.exec(`UPDATE patrons SET card_lost = 1, blocked = 1, block_note = 'Test' WHERE card = 'P0006'`)
	for _, tt := range []struct {
		card string
		want []string
	}{
		{"P0001", nil},
		{"P0002", []string{"You owe more in fines than the limit."}},
		{"P0004", []string{"Your card has expired."}},
		{"P0005", []string{"Your account is blocked."}},
		{"P0003", []string{"This card has been reported lost."}},
		{"P0006", []string{"Your account is blocked.", "This card has been reported lost."}},
	} {
		for _, msg := range []string{
			"23001" + sipNow + "AOCEN|AA" + tt.card + "|AC|AD1234|",
			"63001" + sipNow + "          AOCEN|AA" + tt.card + "|AC|AD1234|",
		} {
			r := send(t, c, msg)
			af := responseFields(r, map[string]int{"24": 35, "64": 59}[r[:2]])["AF"]
			if tt.want == nil && af != "" {
				t.Errorf("%s in good standing: AF %q", msg[:2]+" "+tt.card, af)
			}
			for _, w := range tt.want {
				if !strings.Contains(af, w) {
					t.Errorf("%s: AF %q, want it to say %q", msg[:2]+" "+tt.card, af, w)
				}
			}
		}
	}
}
