package sip

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
)

// throttle counts attempts (SIP passwords, PINs) per key over a window, each before
// it is compared, and locks a key that reaches the limit for a while; a success
// forgets the count. The counts and lockouts are rows of sip_lockouts, so that a
// restart lifts no lockout and staff see (and may lift) them on the SIP accounts
// page. Each attempt costs one small write, against tens of milliseconds of bcrypt
// for the comparison it guards; a terminal compares a patron's PIN once a session
// and logs in once a day, so the hot path (a PIN already verified on the
// connection) never comes here.
type throttle struct {
	d       *db.DB
	kind    string // "login" or "pin"
	limit   int
	window  time.Duration
	lockout time.Duration
}

func newThrottle(d *db.DB, kind string, limit int, window, lockout time.Duration) *throttle {
	return &throttle{d: d, kind: kind, limit: limit, window: window, lockout: lockout}
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

// locked reports whether subject is locked out now.
func (t *throttle) locked(ctx context.Context, subject, addr string) (bool, error) {
	var locked bool
	err := t.d.Read(ctx, func(tx *db.Tx) error {
		var until db.NullTime
		err := tx.QueryRow(`SELECT locked_until FROM sip_lockouts WHERE key = ?`, t.key(subject, addr)).Scan(&until)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		} else if err != nil {
			return fmt.Errorf("read SIP lockout: %w", err)
		}
		locked = until.Valid && tx.Now().Before(until.Time)
		return nil
	})
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
	err = t.d.Write(ctx, func(tx *db.Tx) error {
		now := tx.Now()
		var (
			n     int
			first db.Time
			until db.NullTime
		)
		err := tx.QueryRow(`SELECT failures, window_start, locked_until FROM sip_lockouts WHERE key = ?`, key).Scan(&n, &first, &until)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			// Forget the rows whose window and lockout are over, so that the table
			// stays small whatever is thrown at it.
			if _, err := tx.Exec(`DELETE FROM sip_lockouts WHERE window_start < ? AND (locked_until IS NULL OR locked_until < ?)`,
				db.FormatTime(now.Add(-t.window)), db.FormatTime(now)); err != nil {
				return fmt.Errorf("sweep SIP lockouts: %w", err)
			}
			n, first.Time, until = 0, now, db.NullTime{}
		case err != nil:
			return fmt.Errorf("read SIP lockout: %w", err)
		case until.Valid && now.Before(until.Time):
			return nil
		case now.Sub(first.Time) > t.window:
			n, first.Time = 0, now
		}
		ok = true
		n++
		lockedUntil := sql.NullString{}
		if n >= t.limit {
			locks = true
			lockedUntil = sql.NullString{String: db.FormatTime(now.Add(t.lockout)), Valid: true}
			n, first.Time = 0, now
		} else if until.Valid {
			lockedUntil = sql.NullString{String: db.FormatTime(until.Time), Valid: true}
		}
		_, err = tx.Exec(`INSERT INTO sip_lockouts (key, kind, subject, address, failures, window_start, locked_until)
			VALUES (?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (key) DO UPDATE SET failures = excluded.failures, window_start = excluded.window_start,
				locked_until = excluded.locked_until`,
			key, t.kind, subject, addr, n, db.FormatTime(first.Time), lockedUntil)
		if err != nil {
			return fmt.Errorf("count SIP attempt: %w", err)
		}
		return nil
	})
	return ok, locks, err
}

// succeed forgets the failures of subject.
func (t *throttle) succeed(ctx context.Context, subject, addr string) error {
	return t.d.Write(ctx, func(tx *db.Tx) error {
		_, err := tx.Exec(`DELETE FROM sip_lockouts WHERE key = ?`, t.key(subject, addr))
		return err
	})
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
		db.FormatTime(now), db.FormatTime(now.Add(-attemptWindow)))
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

// Attempt limits: five failed logins for an account from one address, or ten
// wrong PINs for a patron from any terminal, within attemptWindow lock them for
// lockoutFor.
const (
	loginLimit    = 5
	pinLimit      = 10
	attemptWindow = 15 * time.Minute
	lockoutFor    = 15 * time.Minute
)
