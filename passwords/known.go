package passwords

import (
	"context"
	"fmt"
	"strings"
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

// RememberAddress records a successful sign-in of account from addr (an
// AddrKey), inside the transaction that records the sign-in: one statement. The
// rows not seen within KnownFor are deleted by ForgetOldAddresses, daily.
func RememberAddress(tx *db.Tx, account, addr string) error {
	_, err := tx.Exec(`INSERT INTO signin_addresses (key, seen_at) VALUES (?, ?)
		ON CONFLICT (key) DO UPDATE SET seen_at = excluded.seen_at`, knownKey(account, addr), db.FormatTime(tx.Now()))
	if err != nil {
		return fmt.Errorf("remember sign-in address: %w", err)
	}
	return nil
}

// ForgetOldAddresses deletes the addresses not seen within KnownFor (an index
// range), and returns how many: the daily jobs run it, so that the table holds
// the addresses of the last 60 days only.
func ForgetOldAddresses(ctx context.Context, d *db.DB) (int64, error) {
	var n int64
	err := d.Write(ctx, func(tx *db.Tx) error {
		res, err := tx.Exec(`DELETE FROM signin_addresses WHERE seen_at < ?`, db.FormatTime(tx.Now().Add(-KnownFor)))
		if err != nil {
			return fmt.Errorf("forget old sign-in addresses: %w", err)
		}
		n, err = res.RowsAffected()
		return err
	})
	return n, err
}

// Locks is what a sign-in reads before it is counted: the lockouts of its keys
// (rows of login_throttle that have one, ended or not), and whether its address
// is known for its account.
type Locks struct {
	Known bool
	Until map[string]time.Time
}

// ReadLocks reads, in one statement, the lockouts of keys in login_throttle
// and, unless account is "", whether account signed in from addr (an AddrKey)
// within KnownFor: staff and patrons' sign-in learn which of their keys to
// count, and whether one is locked, for the price of the read they made before.
func ReadLocks(tx *db.Tx, account, addr string, keys ...string) (Locks, error) {
	l := Locks{Until: map[string]time.Time{}}
	q := `SELECT key, locked_until FROM login_throttle WHERE key IN (?` + strings.Repeat(", ?", len(keys)-1) + `) AND locked_until IS NOT NULL`
	args := make([]any, 0, len(keys)+2)
	for _, k := range keys {
		args = append(args, k)
	}
	if account != "" {
		// '' is no key of login_throttle: it marks the known address.
		q += ` UNION ALL SELECT '', seen_at FROM signin_addresses WHERE key = ? AND seen_at >= ?`
		args = append(args, knownKey(account, addr), db.FormatTime(tx.Now().Add(-KnownFor)))
	}
	rows, err := tx.Query(q, args...)
	if err != nil {
		return l, fmt.Errorf("read login throttle: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			key string
			at  db.Time
		)
		if err := rows.Scan(&key, &at); err != nil {
			return l, fmt.Errorf("read login throttle: %w", err)
		}
		if key == "" {
			l.Known = true
		} else {
			l.Until[key] = at.Time
		}
	}
	return l, rows.Err()
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
