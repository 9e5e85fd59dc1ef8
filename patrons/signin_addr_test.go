package patrons_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/passwords"
	"github.com/stacks-ils/stacks/patrons"
)

// TestSignInRotatingAddresses: wrong PINs for one card from many addresses share
// the card's budget (five lock it at every address it has not signed in from),
// and never lock the patron out at the computer they signed in from before;
// before, one count for every address let anyone who knew a card number lock
// its patron out. An IPv6 client counts against its /64.
func TestSignInRotatingAddresses(t *testing.T) {
	d := mustOpenDB(t)
	ctx := context.Background()
	s := patrons.NewSignIn(d)
	if _, err := s.Authenticate(ctx, "P0001", "1234", "2001:db8:5:6::10"); err != nil {
		t.Fatalf("the patron's first sign-in at home: %v", err)
	}
	base := passwords.Comparisons()
	for i := range 30 {
		_, err := s.Authenticate(ctx, "P0001", fmt.Sprintf("%04d", 9000+i), fmt.Sprintf("2001:db8:%x::1", 100+i))
		if code := stacks.ErrorCode(err); code != stacks.EUNAUTHORIZED && code != stacks.ETOOMANY {
			t.Fatalf("guess %d: %v", i, err)
		}
	}
	if got := passwords.Comparisons() - base; got > int64(passwords.DefaultThrottle.MaxFailures) {
		t.Errorf("%d of 30 guesses compared, want at most %d", got, passwords.DefaultThrottle.MaxFailures)
	}
	// Another address of the patron's /64 is the same computer.
	if _, err := s.Authenticate(ctx, "P0001", "1234", "2001:db8:5:6:ffff::2"); err != nil {
		t.Errorf("the patron at home after the attack: %v", err)
	}
	if _, err := s.Authenticate(ctx, "P0001", "1234", "2001:db8:5:7::1"); stacks.ErrorCode(err) != stacks.ETOOMANY {
		t.Errorf("the right PIN from another new address: %v, want refused (the card's budget is spent)", err)
	}
	var n int
	err := d.Read(ctx, func(tx *db.Tx) error {
		return tx.QueryRow(`SELECT count(*) FROM signin_addresses WHERE key = 'card:P0001|2001:db8:5:6::/64'`).Scan(&n)
	})
	if err != nil || n != 1 {
		t.Errorf("the patron's /64 known: %d rows (%v), want 1", n, err)
	}
}
