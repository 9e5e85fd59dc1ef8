package passwords

import (
	"context"
	"fmt"
	"sync"

	"golang.org/x/crypto/bcrypt"

	"github.com/stacks-ils/stacks"
)

// BcryptCost is the cost of new password and PIN hashes: bcrypt's default,
// about 50-100 ms a hash here, paid only at sign-in. Tests lower it (the race
// detector makes bcrypt many times slower); existing hashes keep the cost they
// were made with.
var BcryptCost = bcrypt.DefaultCost

// HashPassword hashes a staff password, a SIP account's password or a PIN for
// storage, at BcryptCost, at once (not on the pool: for tools, tests and the
// import, which wait their turn themselves). bcrypt reads 72 bytes at most, so a
// longer password is refused rather than cut short.
func HashPassword(password string) (string, error) {
	if len(password) > 72 {
		return "", stacks.FieldErrorf("password", stacks.EINVALID, "Passwords can be at most 72 bytes long.")
	}
	h, err := bcrypt.GenerateFromPassword([]byte(password), BcryptCost)
	if err != nil {
		return "", fmt.Errorf("hash password: %w", err)
	}
	return string(h), nil
}

// Check reports whether password matches hash, comparing on the Default pool
// (ErrBusy when it is full). For an account that does not exist or has no
// password (hash ""), it compares against a dummy hash all the same and reports
// false, so that the time taken does not tell which accounts exist: staff
// sign-in, patrons' sign-in and SIP2 logins use it.
func Check(ctx context.Context, hash, password string) (bool, error) {
	if hash == "" {
		_, err := Compare(ctx, dummyHash(), password)
		return false, err
	}
	return Compare(ctx, hash, password)
}

// dummyHash is compared against when the account does not exist, made once at
// the current cost.
var dummyHash = sync.OnceValue(func() string {
	h, _ := bcrypt.GenerateFromPassword([]byte("not a real password"), BcryptCost)
	return string(h)
})
