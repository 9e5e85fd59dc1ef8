package web_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/cookiejar"
	"strings"
	"testing"

	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/passwords"
)

// clientFrom is a browser-like client whose connections come from the loopback
// address ip (127.0.0.0/8 is all this machine's).
func (e *testEnv) clientFrom(t testing.TB, ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	tr := &http.Transport{DialContext: d.DialContext}
	t.Cleanup(tr.CloseIdleConnections)
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// TestLoginRotatingAddresses: guesses for one account sent from many addresses
// (loopback's 127.0.0.x here) share the account's budget, and the desk that
// signed in before from its own address keeps signing in through the attack.
// Before, the account's five failures counted for every address alike, so the
// guesses locked the desk out for fifteen minutes.
func TestLoginRotatingAddresses(t *testing.T) {
	e := newEnv(t)
	desk := e.clientFrom(t, "127.0.0.1")
	if r := e.login(t, desk, "desk", "desk"); r.Status != http.StatusSeeOther {
		t.Fatalf("the desk's first sign-in: %d", r.Status)
	}
	base := passwords.Comparisons()
	for i := range 20 {
		c := e.clientFrom(t, fmt.Sprintf("127.0.3.%d", i+1))
		if r := e.login(t, c, "desk", fmt.Sprint("guess", i)); r.Status != http.StatusUnauthorized && r.Status != http.StatusTooManyRequests {
			t.Fatalf("guess %d: status %d", i, r.Status)
		}
	}
	if got := passwords.Comparisons() - base; got > int64(passwords.DefaultThrottle.MaxFailures) {
		t.Errorf("%d of 20 guesses compared, want at most %d", got, passwords.DefaultThrottle.MaxFailures)
	}
	if r := e.login(t, e.clientFrom(t, "127.0.0.1"), "desk", "desk"); r.Status != http.StatusSeeOther {
		t.Errorf("the desk during the attack: %d, want 303", r.Status)
	}
	r := e.login(t, e.clientFrom(t, "127.0.4.1"), "desk", "desk")
	if r.Status != http.StatusTooManyRequests || !strings.Contains(r.Body, "Too many failed sign-ins for this account") {
		t.Errorf("the right password from another new address: %d, want 429 with the reason", r.Status)
	}
	var locked, known int
	err := e.DB.Read(context.Background(), func(tx *db.Tx) error {
		if err := tx.QueryRow(`SELECT count(*) FROM login_throttle WHERE key = 'user:desk' AND locked_until IS NOT NULL`).Scan(&locked); err != nil {
			return err
		}
		return tx.QueryRow(`SELECT count(*) FROM signin_addresses WHERE key = 'staff:desk|127.0.0.1'`).Scan(&known)
	})
	if err != nil || locked != 1 || known != 1 {
		t.Errorf("the account's budget locked: %d, the desk's address known: %d (%v); want 1 and 1", locked, known, err)
	}
}
