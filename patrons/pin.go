package patrons

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/passwords"
)

// HashPIN checks a new PIN (4 to 32 characters without spaces or the "|" that
// SIP uses to end a field) and returns its bcrypt hash. It is slow on purpose.
func HashPIN(pin string) (string, error) {
	if err := ValidatePIN(pin); err != nil {
		return "", err
	}
	return passwords.HashPassword(pin)
}

// ValidatePIN checks a new PIN without hashing it: 4 to 32 characters without
// spaces or the "|" that SIP uses to end a field.
func ValidatePIN(pin string) error {
	if len(pin) < 4 || len(pin) > 32 || strings.ContainsFunc(pin, func(r rune) bool { return r <= ' ' || r == '|' || r == 0x7f }) {
		return stacks.FieldErrorf("pin", stacks.EINVALID, "Choose a PIN of 4 to 32 letters or digits, without spaces.")
	}
	return nil
}

// HashPINOnPool checks a new PIN and hashes it on the bounded pool of package
// passwords (passwords.ErrBusy when it is full), so that PIN changes from the
// patrons' site cannot take every CPU. Call it only after the patron's current
// PIN was checked.
func HashPINOnPool(ctx context.Context, pin string) (string, error) {
	if err := ValidatePIN(pin); err != nil {
		return "", err
	}
	return passwords.Hash(ctx, pin, passwords.BcryptCost)
}

// SetPINHash stores a PIN hashed by HashPIN, and audits the change (not the PIN).
// It advances the patron's PINGeneration, which ends every patrons'-site
// session signed in under the old PIN.
func SetPINHash(tx *db.Tx, actor stacks.Actor, patronID int64, hash string) error {
	res, err := tx.Exec(`UPDATE patrons SET pin_hash = ?, pin_generation = pin_generation + 1 WHERE id = ?`, hash, patronID)
	if err != nil {
		return fmt.Errorf("set the PIN of patron %d: %w", patronID, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return stacks.Errorf(stacks.ENOTFOUND, "There is no patron with id %d. Search for the patron by name or card.", patronID)
	}
	return tx.Audit(actor, "patron.pin", "patron", patronID, "PIN set")
}

// PINHash returns the stored hash of the patron's PIN, "" when none is set. The
// caller compares with CheckPIN outside the transaction: bcrypt is slow on purpose,
// and a connection should not be held for it.
func PINHash(tx *db.Tx, patronID int64) (string, error) {
	var hash string
	err := tx.QueryRow(`SELECT pin_hash FROM patrons WHERE id = ?`, patronID).Scan(&hash)
	if errors.Is(err, sql.ErrNoRows) {
		return "", stacks.Errorf(stacks.ENOTFOUND, "There is no patron with id %d. Search for the patron by name or card.", patronID)
	} else if err != nil {
		return "", fmt.Errorf("read the PIN of patron %d: %w", patronID, err)
	}
	return hash, nil
}

// CheckPIN reports whether pin matches the stored hash, comparing on the bounded
// pool of package passwords: it returns passwords.ErrBusy, without comparing, when
// too many comparisons are running. No PIN matches an empty hash (a patron without
// a PIN), and an empty PIN matches nothing.
func CheckPIN(ctx context.Context, hash, pin string) (bool, error) {
	if hash == "" || pin == "" {
		return false, nil
	}
	return passwords.Compare(ctx, hash, pin)
}
