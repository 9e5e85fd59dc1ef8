package sip

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/passwords"
)

// throttle counts attempts (SIP passwords, PINs) per key over a window, each before
// it is compared, and locks a key that reaches the limit for a while; a success
// forgets the count. The counts and lockouts are rows of sip_lockouts, so that a
// restart lifts no lockout and staff see (and may lift) them on the SIP accounts
// page. Each attempt costs one small write (the count) and a success one more (the
// row's removal), against tens of milliseconds of bcrypt for the comparison they
// guard; a terminal compares a patron's PIN once a session and logs in once a day,
// so the hot path (a PIN already verified on the connection) never comes here.
//
// Logins are counted per account and address (the address an addrKey: an IPv6
// client counts with its /64), and, from an address the account has not logged
// in from within passwords.KnownFor, against the account's budget too: one row
// per account (address "") that every unknown address shares, with a longer
// window. Guesses rotated over many addresses meet that budget; when it is spent
// only unknown addresses are refused, so the terminals that logged in before
// (passwords.IsKnown) keep their own per-address limit and are never locked out
// by guesses from elsewhere.
//
// The count is one upsert that increments in the database (failures + 1, or 1 when
// the window is over), so attempts from several processes on one database never
// overwrite each other's counts.
type throttle struct {
	d       *db.DB
	kind    string // "login" or "pin"
	limit   int
	window  time.Duration
	lockout time.Duration
	// acct is the budget the unknown addresses of an account share (logins; the
	// zero value, for PINs, is none).
	acct budget
	// sweptAt is when rows of this kind whose window and lockout are over were
	// last deleted (unix ns): at most once a minute.
	sweptAt atomic.Int64

	// locked remembers the keys this process locked, until when, so that a PIN
	// remembered on a connection (which skips the database) is refused while its
	// patron is locked out (see conn.checkPIN).
	mu     sync.Mutex
	locked map[string]time.Time
}

// budget is a limit of failures within a window, and the lockout that reaching
// it sets.
type budget struct {
	limit   int
	window  time.Duration
	lockout time.Duration
}

func newThrottle(d *db.DB, kind string, limit int, window, lockout time.Duration) *throttle {
	return &throttle{d: d, kind: kind, limit: limit, window: window, lockout: lockout, locked: map[string]time.Time{}}
}

// key is the row key for subject (a lower-cased username, a patron id) and addr
// (the client's addrKey for logins, "" for PINs and for an account's budget).
func (t *throttle) key(subject, addr string) string {
	k := t.kind + ":" + subject
	if addr != "" {
		k += "|" + addr
	}
	return k
}

// knownAccount is the account name under which signin_addresses remembers the
// addresses a SIP account logged in from.
func knownAccount(subject string) string { return "sip:" + subject }

// mayBeLocked reports whether this process locked subject and the lockout may
// still run: a check without the database, for the hot
// path. A lockout staff lifted, or one another process set, is not seen here.
func (t *throttle) mayBeLocked(subject, addr string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	until, ok := t.locked[t.key(subject, addr)]
	return ok && t.d.Now().Before(until)
}

// isLocked reads whether subject is locked out now, from the database; it forgets
// a lockout of this process's that the database no longer has (lifted by staff).
func (t *throttle) isLocked(ctx context.Context, subject, addr string) (bool, error) {
	key := t.key(subject, addr)
	var locked bool
	err := t.d.Read(ctx, func(tx *db.Tx) error {
		var until db.NullTime
		err := tx.QueryRow(`SELECT locked_until FROM sip_lockouts WHERE key = ?`, key).Scan(&until)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		} else if err != nil {
			return fmt.Errorf("read SIP lockout: %w", err)
		}
		locked = until.Valid && tx.Now().Before(until.Time)
		return nil
	})
	if err == nil && !locked {
		t.mu.Lock()
		delete(t.locked, key)
		t.mu.Unlock()
	}
	return locked, err
}

// reservation is what reserve counted for an attempt: whether it may be
// compared (ok), whether it locked subject at its address (locks), and whether
// it was counted against the account's budget (acct) and spent the last of it
// (acctLocks); refused by the account's budget, byAccount.
type reservation struct {
	ok, locks       bool
	acct, acctLocks bool
	byAccount       bool
}

// errRefusedUncounted rolls back the counts of an attempt refused by a lockout.
var errRefusedUncounted = errors.New("refused by a lockout")

// reserve counts an attempt for subject before its password or PIN is compared,
// and reports whether it may go on: not while subject is locked at addr, nor,
// from an address not known for the account, while the account's budget is
// spent (the attempt is then not counted). Checking the locks and counting
// happen in one write transaction, so attempts sent in parallel cannot all pass
// the check before the first failure is counted. The attempt that reaches a
// limit locks (locks, acctLocks) and is still compared; a success forgets the
// count (succeed).
func (t *throttle) reserve(ctx context.Context, subject, addr string) (reservation, error) {
	var (
		r     reservation
		until time.Time
	)
	err := t.d.Write(ctx, func(tx *db.Tx) error {
		r, until = reservation{}, time.Time{}
		now := tx.Now()
		if err := t.sweep(tx, now); err != nil {
			return err
		}
		if t.acct.limit > 0 {
			known, err := passwords.IsKnown(tx, knownAccount(subject), addr)
			if err != nil {
				return err
			}
			if !known {
				ok, locks, _, err := t.count(tx, now, t.key(subject, ""), subject, "", t.acct)
				if err != nil {
					return err
				}
				if !ok {
					r.byAccount = true
					return errRefusedUncounted
				}
				r.acct, r.acctLocks = true, locks
			}
		}
		ok, locks, lockedUntil, err := t.count(tx, now, t.key(subject, addr), subject, addr, budget{t.limit, t.window, t.lockout})
		if err != nil {
			return err
		}
		until = lockedUntil
		if !ok {
			// The account's count, if any, is rolled back with it.
			return errRefusedUncounted
		}
		r.ok, r.locks = true, locks
		return nil
	})
	if errors.Is(err, errRefusedUncounted) {
		err = nil
	}
	if err == nil && !until.IsZero() {
		t.remember(t.key(subject, addr), until)
	}
	return r, err
}

// count counts an attempt under key, within b, inside tx: ok false (nothing
// counted) while the key's lockout runs; locks when this attempt reaches the
// limit and sets the lockout; until, the key's lockout that runs or was set.
func (t *throttle) count(tx *db.Tx, now time.Time, key, subject, addr string, b budget) (ok, locks bool, until time.Time, err error) {
	nowText, cut := db.FormatTime(now), db.FormatTime(now.Add(-b.window))
	// One statement: a running lockout is left as it is (and this attempt is
	// not counted); a window that is over starts again at 1.
	var (
		n           int
		lockedUntil db.NullTime
	)
	err = tx.QueryRow(`INSERT INTO sip_lockouts (key, kind, subject, address, failures, window_start, locked_until)
		VALUES (?, ?, ?, ?, 1, ?, NULL)
		ON CONFLICT (key) DO UPDATE SET
			failures = CASE WHEN sip_lockouts.locked_until > ? THEN sip_lockouts.failures
				WHEN sip_lockouts.window_start < ? THEN 1 ELSE sip_lockouts.failures + 1 END,
			window_start = CASE WHEN sip_lockouts.locked_until > ? THEN sip_lockouts.window_start
				WHEN sip_lockouts.window_start < ? THEN ? ELSE sip_lockouts.window_start END
		RETURNING failures, locked_until`,
		key, t.kind, subject, addr, nowText, nowText, cut, nowText, cut, nowText).Scan(&n, &lockedUntil)
	if err != nil {
		return false, false, time.Time{}, fmt.Errorf("count SIP attempt: %w", err)
	}
	if lockedUntil.Valid && now.Before(lockedUntil.Time) {
		return false, false, lockedUntil.Time, nil
	}
	if n >= b.limit {
		until = now.Add(b.lockout)
		_, err := tx.Exec(`UPDATE sip_lockouts SET failures = 0, window_start = ?, locked_until = ? WHERE key = ?`,
			nowText, db.FormatTime(until), key)
		if err != nil {
			return false, false, time.Time{}, fmt.Errorf("lock SIP %s: %w", t.kind, err)
		}
		return true, true, until, nil
	}
	return true, false, time.Time{}, nil
}

// unreserve gives back an attempt that reserve counted but that was not compared
// (the comparison pool was full): an innocent patron must not be locked out by
// the server's being busy. A lockout that attempt set is lifted.
func (t *throttle) unreserve(ctx context.Context, subject, addr string, r reservation) error {
	key := t.key(subject, addr)
	err := t.d.Write(ctx, func(tx *db.Tx) error {
		if err := t.giveBack(tx, key, t.limit, r.locks); err != nil {
			return err
		}
		if r.acct {
			return t.giveBack(tx, t.key(subject, ""), t.acct.limit, r.acctLocks)
		}
		return nil
	})
	if err == nil && r.locks {
		t.mu.Lock()
		delete(t.locked, key)
		t.mu.Unlock()
	}
	return err
}

// giveBack takes one attempt off key's count, inside tx, and lifts the lockout
// when that attempt set it (limit is the key's).
func (t *throttle) giveBack(tx *db.Tx, key string, limit int, locked bool) error {
	if locked {
		_, err := tx.Exec(`UPDATE sip_lockouts SET failures = ?, locked_until = NULL WHERE key = ?`, limit-1, key)
		return err
	}
	if _, err := tx.Exec(`UPDATE sip_lockouts SET failures = failures - 1 WHERE key = ? AND failures > 0`, key); err != nil {
		return err
	}
	// A count back at nothing is no row, as before the attempt.
	_, err := tx.Exec(`DELETE FROM sip_lockouts WHERE key = ? AND failures = 0 AND locked_until IS NULL`, key)
	return err
}

// succeed forgets the failures of subject at addr, inside tx. For a login it
// also gives back the attempt's count in the account's budget (the failures
// of other unknown addresses stay counted: a terminal's logins must not renew
// the budget of guesses from elsewhere), and remembers addr as known for the
// account.
func (t *throttle) succeed(tx *db.Tx, subject, addr string, r reservation) error {
	if _, err := tx.Exec(`DELETE FROM sip_lockouts WHERE key = ?`, t.key(subject, addr)); err != nil {
		return err
	}
	if r.acct {
		if err := t.giveBack(tx, t.key(subject, ""), t.acct.limit, r.acctLocks); err != nil {
			return err
		}
	}
	if t.acct.limit > 0 {
		return passwords.RememberAddress(tx, knownAccount(subject), addr)
	}
	return nil
}

// remember notes a lockout of key until then in the process's memory.
func (t *throttle) remember(key string, until time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.locked) > 10000 {
		now := t.d.Now()
		for k, u := range t.locked {
			if !now.Before(u) {
				delete(t.locked, k)
			}
		}
	}
	t.locked[key] = until
}

// sweep deletes, at most once a minute, the rows of this kind whose window and
// lockout are over, so that the table stays small whatever is thrown at it
// (sip_lockouts_window makes it a range scan).
func (t *throttle) sweep(tx *db.Tx, now time.Time) error {
	last := t.sweptAt.Load()
	if now.UnixNano()-last < int64(time.Minute) && now.UnixNano() >= last {
		return nil
	}
	t.sweptAt.Store(now.UnixNano())
	_, err := tx.Exec(`DELETE FROM sip_lockouts WHERE kind = ? AND window_start < ? AND (locked_until IS NULL OR locked_until < ?)`,
		t.kind, db.FormatTime(now.Add(-max(t.window, t.acct.window))), db.FormatTime(now))
	if err != nil {
		return fmt.Errorf("sweep SIP lockouts: %w", err)
	}
	return nil
}

// Lockout is a row of sip_lockouts as staff see it: failed attempts being counted,
// or a lockout running.
type Lockout struct {
	Key     string
	Kind    string // "login" or "pin"
	Subject string // the username, or the patron's id
	// Address is the client's address (an IPv6 /64) of a login's count; ""
	// for a PIN's, and for an account's budget, which every address the
	// account has not logged in from shares.
	Address     string
	Failures    int
	WindowStart time.Time
	LockedUntil time.Time // zero when not locked
}

// Locked reports whether the lockout runs at now.
func (l *Lockout) Locked(now time.Time) bool { return now.Before(l.LockedUntil) }

// ListLockouts returns the lockouts running and the failures being counted at
// now (windows of 15 minutes), newest first. An account's budget (a login row
// without an address) is listed while it is locked: the failures it counts,
// spread over an hour and many addresses, are each in the log.
func ListLockouts(tx *db.Tx) ([]Lockout, error) {
	now := tx.Now()
	rows, err := tx.Query(`SELECT key, kind, subject, address, failures, window_start, locked_until FROM sip_lockouts
		WHERE locked_until > ? OR (window_start >= ? AND NOT (kind = 'login' AND address = ''))
		ORDER BY window_start DESC, key LIMIT 500`,
		db.FormatTime(now), db.FormatTime(now.Add(-AttemptWindow)))
	if err != nil {
		return nil, fmt.Errorf("list SIP lockouts: %w", err)
	}
	defer rows.Close()
	var out []Lockout
	for rows.Next() {
		var (
			l     Lockout
			first db.Time
			until db.NullTime
		)
		if err := rows.Scan(&l.Key, &l.Kind, &l.Subject, &l.Address, &l.Failures, &first, &until); err != nil {
			return nil, fmt.Errorf("list SIP lockouts: %w", err)
		}
		l.WindowStart, l.LockedUntil = first.Time, until.Time
		out = append(out, l)
	}
	return out, rows.Err()
}

// ClearLockout lifts a lockout (and forgets its failures), audited.
func ClearLockout(tx *db.Tx, actor stacks.Actor, key string) error {
	res, err := tx.Exec(`DELETE FROM sip_lockouts WHERE key = ?`, key)
	if err != nil {
		return fmt.Errorf("clear SIP lockout: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return stacks.Errorf(stacks.ENOTFOUND, "That lockout has ended already.")
	}
	return tx.Audit(actor, "sip.lockout.clear", "sip_lockout", 0, key)
}

// Attempt limits: LoginLimit failed logins for an account from one address, or
// PINLimit wrong PINs for a patron from any terminal, within AttemptWindow lock
// them for LockoutFor. AccountLoginLimit failed logins for an account within
// AccountWindow, from all the addresses it has not logged in from within
// passwords.KnownFor together, lock it for AccountLockoutFor at every such
// address; its known addresses keep their own LoginLimit. The SIP accounts page
// states them.
const (
	LoginLimit        = 5
	PINLimit          = 10
	AttemptWindow     = 15 * time.Minute
	LockoutFor        = 15 * time.Minute
	AccountLoginLimit = 10
	AccountWindow     = time.Hour
	AccountLockoutFor = time.Hour
)

// newLoginThrottle returns the throttle of logins: per account and address, and
// the budget an account's unknown addresses share.
func newLoginThrottle(d *db.DB) *throttle {
	t := newThrottle(d, "login", LoginLimit, AttemptWindow, LockoutFor)
	t.acct = budget{limit: AccountLoginLimit, window: AccountWindow, lockout: AccountLockoutFor}
	return t
}
