package staff_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/db/dbtest"
	"github.com/stacks-ils/stacks/passwords"
	"github.com/stacks-ils/stacks/staff"
)

// signInEnv is a library with one branch and the staff accounts names, each
// with the password "pass".
func signInEnv(t *testing.T, names ...string) (*db.DB, *staff.Service) {
	t.Helper()
	passwords.BcryptCost = bcrypt.MinCost
	d := dbtest.Open(t, db.Options{})
	err := d.Write(context.Background(), func(tx *db.Tx) error {
		if _, err := tx.Exec(`INSERT INTO branches (code, name) VALUES ('CEN', 'Central')`); err != nil {
			return err
		}
		for _, n := range names {
			if _, err := staff.Create(tx, staff.NewUser{Username: n, DisplayName: n, Password: "pass", Role: staff.RoleCirculation, BranchCode: "CEN"}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return d, staff.NewService(d)
}

// TestSignInRotatingAddresses: guesses for one account from many addresses share
// the account's budget (five failures lock it at every address it has not
// signed in from), and never lock out the desk that signed in before: before,
// the account's count was one for every address, so anyone who knew a user name
// locked its desks out for fifteen minutes.
func TestSignInRotatingAddresses(t *testing.T) {
	ctx := context.Background()
	d, svc := signInEnv(t, "ann")
	if _, err := svc.SignIn(ctx, "ann", "pass", "10.0.0.1", ""); err != nil {
		t.Fatalf("the desk's first sign-in: %v", err)
	}
	base := passwords.Comparisons()
	for i := range 30 {
		_, err := svc.SignIn(ctx, "ann", fmt.Sprint("guess", i), fmt.Sprintf("10.9.%d.%d", i/200, i%200+1), "")
		if code := stacks.ErrorCode(err); code != stacks.EUNAUTHORIZED && code != stacks.ETOOMANY {
			t.Fatalf("guess %d: %v", i, err)
		}
		if i == 15 {
			if _, err := svc.SignIn(ctx, "ann", "pass", "10.0.0.1", ""); err != nil {
				t.Fatalf("the desk during the attack: %v", err)
			}
		}
	}
	if got := passwords.Comparisons() - base; got > int64(passwords.DefaultThrottle.MaxFailures)+1 {
		t.Errorf("%d of 30 guesses compared (and the desk's sign-in), want at most %d", got, passwords.DefaultThrottle.MaxFailures+1)
	}
	if _, err := svc.SignIn(ctx, "ann", "pass", "10.0.0.1", ""); err != nil {
		t.Errorf("the desk after the attack: %v", err)
	}
	if _, err := svc.SignIn(ctx, "ann", "pass", "10.8.0.1", ""); stacks.ErrorCode(err) != stacks.ETOOMANY {
		t.Errorf("the right password from another new address: %v, want refused (the account's budget is spent)", err)
	}
	var n int
	err := d.Read(ctx, func(tx *db.Tx) error {
		return tx.QueryRow(`SELECT count(*) FROM login_throttle WHERE key = 'user:ann' AND locked_until IS NOT NULL`).Scan(&n)
	})
	if err != nil || n != 1 {
		t.Errorf("the account's budget locked: %d rows (%v), want 1", n, err)
	}

	// No name tried is the desk's key: "ann|10.0.0.1" is a name like any other.
	for i := range passwords.DefaultThrottle.MaxFailures {
		svc.SignIn(ctx, "ann|10.0.0.1", fmt.Sprint("guess", i), "10.7.0.1", "")
		svc.SignIn(ctx, "ann 10.0.0.1", fmt.Sprint("guess", i), "10.7.0.2", "")
	}
	if _, err := svc.SignIn(ctx, "ann", "pass", "10.0.0.1", ""); err != nil {
		t.Errorf("the desk after guesses for names made of its key: %v", err)
	}

	// The desk's own limit still holds for it.
	for i := range passwords.DefaultThrottle.MaxFailures {
		if _, err := svc.SignIn(ctx, "ann", fmt.Sprint("typo", i), "10.0.0.1", ""); stacks.ErrorCode(err) != stacks.EUNAUTHORIZED {
			t.Fatalf("the desk's typo %d: %v", i, err)
		}
	}
	if _, err := svc.SignIn(ctx, "ann", "pass", "10.0.0.1", ""); stacks.ErrorCode(err) != stacks.ETOOMANY || !strings.Contains(stacks.ErrorMessage(err), "this account") {
		t.Errorf("the desk after its own five failures: %v, want refused", err)
	}
}

// TestSignInIPv6Prefix: an IPv6 client counts against its /64, so that taking a
// new address of its own network for each guess does not escape the limit per
// address.
func TestSignInIPv6Prefix(t *testing.T) {
	ctx := context.Background()
	_, svc := signInEnv(t)
	limit := passwords.DefaultThrottle.MaxAddrFailures
	for i := range limit {
		// A new name each time: only the address is counted more than once.
		_, err := svc.SignIn(ctx, fmt.Sprint("name", i), "guess", fmt.Sprintf("2001:db8:1:2::%x", i+1), "")
		if stacks.ErrorCode(err) != stacks.EUNAUTHORIZED {
			t.Fatalf("guess %d: %v", i, err)
		}
	}
	_, err := svc.SignIn(ctx, "another", "guess", "2001:db8:1:2:abcd::1", "")
	if stacks.ErrorCode(err) != stacks.ETOOMANY || !strings.Contains(stacks.ErrorMessage(err), "this computer") {
		t.Errorf("another address of the same /64 after %d failures: %v, want refused for this computer", limit, err)
	}
	if _, err := svc.SignIn(ctx, "another", "guess", "2001:db8:1:3::1", ""); stacks.ErrorCode(err) != stacks.EUNAUTHORIZED {
		t.Errorf("an address of another /64: %v, want an ordinary failure", err)
	}
}

// TestSignInNewAddressKeepsBudget: a right password from a new address gives back
// its own attempt only: the failures that guesses from elsewhere spent of the
// account's shared budget stay counted, and the next guesses still lock it.
func TestSignInNewAddressKeepsBudget(t *testing.T) {
	ctx := context.Background()
	_, svc := signInEnv(t, "ann")
	limit := passwords.DefaultThrottle.MaxFailures
	for i := range limit - 1 {
		if _, err := svc.SignIn(ctx, "ann", fmt.Sprint("guess", i), fmt.Sprintf("10.9.0.%d", i+1), ""); stacks.ErrorCode(err) != stacks.EUNAUTHORIZED {
			t.Fatalf("guess %d: %v", i, err)
		}
	}
	// Ann at a new machine: in, and that sign-in is not a failure.
	if _, err := svc.SignIn(ctx, "ann", "pass", "10.8.0.1", ""); err != nil {
		t.Fatalf("the right password from a new address: %v", err)
	}
	// One more guess from yet another address spends the budget.
	svc.SignIn(ctx, "ann", "guess-last", "10.9.1.1", "")
	if _, err := svc.SignIn(ctx, "ann", "pass", "10.7.0.1", ""); stacks.ErrorCode(err) != stacks.ETOOMANY {
		t.Errorf("the right password from another new address after %d guesses: %v, want refused (a sign-in from a new address must not renew the budget)", limit, err)
	}
}
