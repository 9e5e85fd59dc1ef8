package passwords

import (
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/stacks-ils/stacks/db"
)

// KnownFor is how long an address stays known for an account after the
// account's last successful sign-in from it.
//
// Known addresses are how the sign-in limits per account spare the real
// terminals and desks: staff sign-in, patrons' sign-in and SIP2 logins count a
// failure from an address known for the account against that account and
// address only, and a failure from any other address against one budget the
// account's unknown addresses share. Guesses from many addresses (a /8 of
// loopback, a botnet, a /48 of IPv6) then meet one slow budget, and using it up
// refuses only other unknown addresses: a terminal that logged in before keeps
// its own limit, which nobody elsewhere can spend.
const KnownFor = 60 * 24 * time.Hour

// knownKey is the row of signin_addresses for account (a prefixed name such as
// "sip:kiosk" or "staff:desk") at addr (an AddrKey).
func knownKey(account, addr string) string { return account + "|" + addr }

// IsKnown reports whether account signed in successfully from addr (an
// AddrKey) within KnownFor, inside tx.
func IsKnown(tx *db.Tx, account, addr string) (bool, error) {
	var n int
	err := tx.QueryRow(`SELECT count(*) FROM signin_addresses WHERE key = ? AND seen_at >= ?`,
		knownKey(account, addr), db.FormatTime(tx.Now().Add(-KnownFor))).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("read known sign-in address: %w", err)
	}
	return n > 0, nil
}

// RememberAddress records a successful sign-in of account from addr (an
// AddrKey), inside the transaction that records the sign-in, and deletes the
// rows not seen within KnownFor (an index range: the table holds one row per
// account and address that signed in, nothing an attacker can add to).
func RememberAddress(tx *db.Tx, account, addr string) error {
	now := tx.Now()
	_, err := tx.Exec(`INSERT INTO signin_addresses (key, seen_at) VALUES (?, ?)
		ON CONFLICT (key) DO UPDATE SET seen_at = excluded.seen_at`, knownKey(account, addr), db.FormatTime(now))
	if err != nil {
		return fmt.Errorf("remember sign-in address: %w", err)
	}
	if _, err := tx.Exec(`DELETE FROM signin_addresses WHERE seen_at < ?`, db.FormatTime(now.Add(-KnownFor))); err != nil {
		return fmt.Errorf("forget old sign-in addresses: %w", err)
	}
	return nil
}

// ForgetAddresses deletes every known address of account, inside tx: when a
// patron's record is purged.
func ForgetAddresses(tx *db.Tx, account string) error {
	prefix := account + "|"
	_, err := tx.Exec(`DELETE FROM signin_addresses WHERE substr(key, 1, ?) = ?`, utf8.RuneCountInString(prefix), prefix)
	if err != nil {
		return fmt.Errorf("forget sign-in addresses: %w", err)
	}
	return nil
}
