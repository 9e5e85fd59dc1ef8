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
// The count is one upsert that increments in the database (failures + 1, or 1 when
// the window is over), so attempts from several processes on one database never
// overwrite each other's counts.
type throttle struct {
	d       *db.DB
	kind    string // "login" or "pin"
	limit   int
	window  time.Duration
	lockout time.Duration
	// sweptAt is when rows of this kind whose window and lockout are over were
	// last deleted (unix ns): at most once a minute.
	sweptAt atomic.Int64

	// locked remembers the keys this process locked, until when, so that a PIN
	// remembered on a connection (which skips the database) is refused while its
	// patron is locked out (see conn.checkPIN).
	mu     sync.Mutex
	locked map[string]time.Time
}

func newThrottle(d *db.DB, kind string, limit int, window, lockout time.Duration) *throttle {
	return &throttle{d: d, kind: kind, limit: limit, window: window, lockout: lockout, locked: map[string]time.Time{}}
}

// key is the row key for subject (a lower-cased username, a patron id) and addr
// (the client's address for logins, "" for PINs).
func (t *throttle) key(subject, addr string) string {
	k := t.kind + ":" + subject
	if addr != "" {
		k += "|" + addr
	}
	return k
}

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

// reserve counts an attempt for subject before its password or PIN is compared,
// and reports whether it may go on: not while subject is locked (the attempt is
// then not counted). Checking the lock and counting happen in one write
// transaction, so attempts sent in parallel cannot all pass the check before the
// first failure is counted. The attempt that reaches the limit locks subject
// (locks is true) and is still compared; a success forgets the count (succeed).
func (t *throttle) reserve(ctx context.Context, subject, addr string) (ok, locks bool, err error) {
	key := t.key(subject, addr)
	var until time.Time
	err = t.d.Write(ctx, func(tx *db.Tx) error {
		now := tx.Now()
		nowText, cut := db.FormatTime(now), db.FormatTime(now.Add(-t.window))
		if err := t.sweep(tx, now); err != nil {
			return err
		}
		// One statement: a running lockout is left as it is (and this attempt is
		// not counted); a window that is over starts again at 1.
		var (
			n           int
			lockedUntil db.NullTime
		)
		err := tx.QueryRow(`INSERT INTO sip_lockouts (key, kind, subject, address, failures, window_start, locked_until)
			VALUES (?, ?, ?, ?, 1, ?, NULL)
			ON CONFLICT (key) DO UPDATE SET
				failures = CASE WHEN sip_lockouts.locked_until > ? THEN sip_lockouts.failures
					WHEN sip_lockouts.window_start < ? THEN 1 ELSE sip_lockouts.failures + 1 END,
				window_start = CASE WHEN sip_lockouts.locked_until > ? THEN sip_lockouts.window_start
					WHEN sip_lockouts.window_start < ? THEN ? ELSE sip_lockouts.window_start END
			RETURNING failures, locked_until`,
			key, t.kind, subject, addr, nowText, nowText, cut, nowText, cut, nowText).Scan(&n, &lockedUntil)
		if err != nil {
			return fmt.Errorf("count SIP attempt: %w", err)
		}
		if lockedUntil.Valid && now.Before(lockedUntil.Time) {
			until = lockedUntil.Time
			return nil
		}
		ok = true
		if n >= t.limit {
			locks, until = true, now.Add(t.lockout)
			_, err := tx.Exec(`UPDATE sip_lockouts SET failures = 0, window_start = ?, locked_until = ? WHERE key = ?`,
				nowText, db.FormatTime(until), key)
			if err != nil {
				return fmt.Errorf("lock SIP %s: %w", t.kind, err)
			}
		}
		return nil
	})
	if err == nil && !until.IsZero() {
		t.remember(key, until)
	}
	return ok, locks, err
}

// unreserve gives back an attempt that reserve counted but that was not compared
// (the comparison pool was full): an innocent patron must not be locked out by
// the server's being busy. A lockout that attempt set is lifted.
func (t *throttle) unreserve(ctx context.Context, subject, addr string, locked bool) error {
	key := t.key(subject, addr)
	err := t.d.Write(ctx, func(tx *db.Tx) error {
		if locked {
			_, err := tx.Exec(`UPDATE sip_lockouts SET failures = ?, locked_until = NULL WHERE key = ?`, t.limit-1, key)
			return err
		}
		_, err := tx.Exec(`UPDATE sip_lockouts SET failures = failures - 1 WHERE key = ? AND failures > 0`, key)
		return err
	})
	if err == nil && locked {
		t.mu.Lock()
		delete(t.locked, key)
		t.mu.Unlock()
	}
	return err
}

// succeed forgets the failures of subject, inside tx.
func (t *throttle) succeed(tx *db.Tx, subject, addr string) error {
	_, err := tx.Exec(`DELETE FROM sip_lockouts WHERE key = ?`, t.key(subject, addr))
	return err
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
		t.kind, db.FormatTime(now.Add(-t.window)), db.FormatTime(now))
	if err != nil {
		return fmt.Errorf("sweep SIP lockouts: %w", err)
	}
	return nil
}

// Lockout is a row of sip_lockouts as staff see it: failed attempts being counted,
// or a lockout running.
type Lockout struct {
	Key         string
	Kind        string // "login" or "pin"
	Subject     string // the username, or the patron's id
	Address     string
	Failures    int
	WindowStart time.Time
	LockedUntil time.Time // zero when not locked
}

// Locked reports whether the lockout runs at now.
func (l *Lockout) Locked(now time.Time) bool { return now.Before(l.LockedUntil) }

// ListLockouts returns the lockouts running and the failures being counted at
// now (windows of 15 minutes), newest first.
func ListLockouts(tx *db.Tx) ([]Lockout, error) {
	now := tx.Now()
	rows, err := tx.Query(`SELECT key, kind, subject, address, failures, window_start, locked_until FROM sip_lockouts
		WHERE locked_until > ? OR window_start >= ? ORDER BY window_start DESC, key LIMIT 500`,
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
// them for LockoutFor. The SIP accounts page states them.
const (
	LoginLimit    = 5
	PINLimit      = 10
	AttemptWindow = 15 * time.Minute
	LockoutFor    = 15 * time.Minute
)
