package passwords

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/stacks-ils/stacks/db"
)

// Budget is a limit of failures within a window, and the lockout that reaching
// it sets.
type Budget struct {
	Max     int
	Window  time.Duration
	Lockout time.Duration
}

// Counted is a key of login_throttle an attempt is counted under, with its
// budget (none, Max 0: a key the attempt only waits under). Forget says what
// a success does: forget the key's failures (an account at an address it
// signed in from, a patron's PIN), or take back this attempt only (a budget
// that other addresses share, which a success must not renew for guesses from
// elsewhere). InFlight attempts under the key are checked at a time (0: no
// limit).
type Counted struct {
	Key      string
	Budget   Budget
	Forget   bool
	InFlight int
}

// counted are the keys of keys that count (a budget).
func counted(keys []Counted) []Counted {
	out := make([]Counted, 0, len(keys))
	for _, k := range keys {
		if k.Budget.Max > 0 {
			out = append(out, k)
		}
	}
	return out
}

// CountFailure counts, in login_throttle, an attempt under each of keys before
// its password or PIN is compared, and locks for its lockout a key whose count
// within its window reaches its limit. One statement: the count and the lock of
// every key (a failure outside the window starts a new count). A key whose
// lockout runs is not counted: the statement leaves its row alone. It returns
// the keys this attempt locked (set) and, when some key was locked already, the
// lockouts that refuse it (refused, read by one more statement): the caller
// then rolls tx back, which takes back the counts of the other keys. GiveBack
// takes a counted attempt back.
func CountFailure(tx *db.Tx, keys []Counted) (set, refused map[string]time.Time, err error) {
	keys = counted(keys)
	if len(keys) == 0 {
		return nil, nil, nil
	}
	now := tx.Now()
	var args []any
	param := func(v any) string {
		args = append(args, v)
		return "?" + strconv.Itoa(len(args))
	}
	at := param(db.FormatTime(now))
	var values []string
	var cut, limit, until strings.Builder
	for _, k := range keys {
		key, lockedTo := param(k.Key), param(db.FormatTime(now.Add(k.Budget.Lockout)))
		first := "NULL"
		if k.Budget.Max <= 1 {
			first = lockedTo
		}
		values = append(values, "("+key+", 1, "+at+", "+first+")")
		cut.WriteString(" WHEN " + key + " THEN " + param(db.FormatTime(now.Add(-k.Budget.Window))))
		limit.WriteString(" WHEN " + key + " THEN CAST(" + param(k.Budget.Max) + " AS INTEGER)")
		until.WriteString(" WHEN " + key + " THEN " + lockedTo)
	}
	// Each key's window, limit and lockout, chosen by the row's key.
	windowOver := `login_throttle.first_at < CASE login_throttle.key` + cut.String() + ` END`
	rows, err := tx.Query(`INSERT INTO login_throttle (key, failures, first_at, locked_until)
		VALUES `+strings.Join(values, ", ")+`
		ON CONFLICT (key) DO UPDATE SET
			failures = CASE WHEN `+windowOver+` THEN 1 ELSE login_throttle.failures + 1 END,
			first_at = CASE WHEN `+windowOver+` THEN excluded.first_at ELSE login_throttle.first_at END,
			locked_until = CASE WHEN (CASE WHEN `+windowOver+` THEN 1 ELSE login_throttle.failures + 1 END) >=
				CASE login_throttle.key`+limit.String()+` END THEN CASE login_throttle.key`+until.String()+` END END
		WHERE login_throttle.locked_until IS NULL OR login_throttle.locked_until <= `+at+`
		RETURNING key, locked_until`, args...)
	if err != nil {
		return nil, nil, fmt.Errorf("count sign-in attempt: %w", err)
	}
	set = map[string]time.Time{}
	seen := map[string]bool{}
	for rows.Next() {
		var (
			key string
			to  db.NullTime
		)
		if err := rows.Scan(&key, &to); err != nil {
			rows.Close()
			return nil, nil, fmt.Errorf("count sign-in attempt: %w", err)
		}
		seen[key] = true
		if to.Valid {
			set[key] = to.Time
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("count sign-in attempt: %w", err)
	}
	// A row the statement left alone (its lockout runs) is returned by none.
	var left []string
	for _, k := range keys {
		if !seen[k.Key] {
			left = append(left, k.Key)
		}
	}
	if len(left) == 0 {
		return set, nil, nil
	}
	locks, err := ReadLocks(tx, "", "", left...)
	if err != nil {
		return nil, nil, err
	}
	return set, locks.Until, nil
}

// GiveBack takes back, in login_throttle, the count of an attempt under keys.
// After a success (succeeded) a key that forgets (Counted.Forget) loses all its
// failures; every other key loses this attempt, with the lock it may have set.
// An attempt that was never compared (the comparison pool was full) is given
// back with succeeded false: it loses only itself, so that an innocent patron
// is not locked out by the server being busy, and a count it brings back to
// nothing is deleted, as before the attempt.
func GiveBack(tx *db.Tx, keys []Counted, succeeded bool) error {
	for _, k := range counted(keys) {
		if succeeded && k.Forget {
			if _, err := tx.Exec(`DELETE FROM login_throttle WHERE key = ?`, k.Key); err != nil {
				return fmt.Errorf("forget sign-in failures: %w", err)
			}
			continue
		}
		_, err := tx.Exec(`UPDATE login_throttle SET failures = CASE WHEN failures > 1 THEN failures - 1 ELSE 0 END,
				locked_until = CASE WHEN failures - 1 >= ? THEN locked_until END
			WHERE key = ?`, k.Budget.Max, k.Key)
		if err != nil {
			return fmt.Errorf("give back sign-in attempt: %w", err)
		}
		if succeeded {
			// A row left at nothing counts on as no row would: a
			// sign-in runs no statement more than it needs.
			continue
		}
		_, err = tx.Exec(`DELETE FROM login_throttle WHERE key = ? AND failures = 0 AND locked_until IS NULL`, k.Key)
		if err != nil {
			return fmt.Errorf("give back sign-in attempt: %w", err)
		}
	}
	return nil
}

// Lock is a row of login_throttle as staff see it: failures being counted
// since FirstAt, or a lockout running until LockedUntil.
type Lock struct {
	Key         string
	Failures    int
	FirstAt     time.Time
	LockedUntil time.Time // zero when not locked
}

// Locked reports whether the lockout runs at now.
func (l *Lock) Locked(now time.Time) bool { return now.Before(l.LockedUntil) }

// prefixed is the condition that a key of login_throttle starts with one of
// prefixes, and its arguments.
func prefixed(prefixes []string) (string, []any) {
	var (
		cond []string
		args []any
	)
	for _, p := range prefixes {
		cond = append(cond, `substr(key, 1, ?) = ?`)
		args = append(args, utf8.RuneCountInString(p), p)
	}
	return "(" + strings.Join(cond, " OR ") + ")", args
}

// ListLocks returns the rows of login_throttle under prefixes that are locked
// at now or count failures since since, newest first, at most limit: what a
// staff page lists for one protocol's keys (SIP2's "login:" and "pin:").
func ListLocks(tx *db.Tx, since time.Time, limit int, prefixes ...string) ([]Lock, error) {
	cond, args := prefixed(prefixes)
	args = append(args, db.FormatTime(tx.Now()), db.FormatTime(since), limit)
	rows, err := tx.Query(`SELECT key, failures, first_at, locked_until FROM login_throttle
		WHERE `+cond+` AND (locked_until > ? OR first_at >= ?)
		ORDER BY first_at DESC, key LIMIT ?`, args...)
	if err != nil {
		return nil, fmt.Errorf("list sign-in lockouts: %w", err)
	}
	defer rows.Close()
	var out []Lock
	for rows.Next() {
		var (
			l     Lock
			first db.Time
			until db.NullTime
		)
		if err := rows.Scan(&l.Key, &l.Failures, &first, &until); err != nil {
			return nil, fmt.Errorf("list sign-in lockouts: %w", err)
		}
		l.FirstAt, l.LockedUntil = first.Time, until.Time
		out = append(out, l)
	}
	return out, rows.Err()
}

// Lift deletes key's row of login_throttle, its lockout and its failures:
// false when there was none.
func Lift(tx *db.Tx, key string) (bool, error) {
	res, err := tx.Exec(`DELETE FROM login_throttle WHERE key = ?`, key)
	if err != nil {
		return false, fmt.Errorf("lift sign-in lockout: %w", err)
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// SweepAfter is how long Sweep keeps a row of login_throttle after its count
// began: longer than any budget's window, so that no count running is lost.
const SweepAfter = 24 * time.Hour

// Sweep deletes the rows of login_throttle, of every site, whose count began
// more than SweepAfter ago and whose lockout, if any, is over: rows that count
// nothing any more. The daily jobs and a running server (every few minutes)
// run it, so that the names tried (any text) cannot fill the table. It deletes
// sweepBatch rows a transaction, so that sweeping a flood of names does not
// hold the desk's writes up.
func Sweep(ctx context.Context, d *db.DB) (int64, error) {
	var total int64
	for {
		var n int64
		err := d.Write(ctx, func(tx *db.Tx) error {
			now := tx.Now()
			res, err := tx.Exec(`DELETE FROM login_throttle WHERE key IN (
				SELECT key FROM login_throttle WHERE first_at < ? AND (locked_until IS NULL OR locked_until <= ?) LIMIT ?)`,
				db.FormatTime(now.Add(-SweepAfter)), db.FormatTime(now), sweepBatch)
			if err != nil {
				return fmt.Errorf("sweep sign-in counts: %w", err)
			}
			n, err = res.RowsAffected()
			return err
		})
		total += n
		if err != nil || n < sweepBatch {
			return total, err
		}
	}
}

// sweepBatch is the most rows Sweep deletes in one transaction.
const sweepBatch = 1000

// PINKey is the key of login_throttle that counts a patron's PINs over SIP2
// (PINPrefix and the patron's id): SIP2 counts under it, and a patron's purge
// deletes it.
func PINKey(patronID int64) string { return PINPrefix + strconv.FormatInt(patronID, 10) }

// PINPrefix begins every key of PINKey: SIP2 lists and lifts PIN lockouts by it.
const PINPrefix = "pin:"
