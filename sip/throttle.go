package sip

import (
	"maps"
	"strings"
	"sync"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
	"github.com/stacks-ils/stacks/passwords"
)

// SIP2 logins and PINs are throttled by the one sign-in throttle staff and
// patrons' sign-in use (passwords.Limiter): each attempt is counted in
// login_throttle before it is compared, in the write transaction that checks
// the locks, so that a restart lifts no lockout and staff see (and may lift)
// them on the SIP accounts page. A terminal compares a patron's PIN once a
// session and logs in once a day, so the hot path (a PIN already verified on
// the connection) never counts.
//
// The keys are SIP2's own:
//
//   - login:USERNAME|ADDRESS counts an account's logins from one address (an
//     IPv6 client counts with its /64); LoginLimit within AttemptWindow lock
//     it for LockoutFor, and a login there forgets its failures.
//   - login:USERNAME counts, from an address the account has not logged in from
//     within passwords.KnownFor, the account's budget too: every unknown
//     address shares it, AccountLoginLimit within AccountWindow lock it for
//     AccountLockoutFor, and a login takes back its own attempt only (a
//     terminal's logins must not renew the budget of guesses from elsewhere).
//     Guesses rotated over many addresses meet that budget; when it is spent
//     only unknown addresses are refused, so the terminals that logged in
//     before keep their own per-address limit.
//   - pin:PATRON_ID counts a patron's PINs from any terminal; PINLimit within
//     AttemptWindow lock it for LockoutFor.
//
// The usernames tried are any text, so the rows whose window and lockout are
// over are deleted by a running server every few minutes and by the daily jobs
// (passwords.Sweep).

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

var (
	loginBudget   = passwords.Budget{Max: LoginLimit, Window: AttemptWindow, Lockout: LockoutFor}
	accountBudget = passwords.Budget{Max: AccountLoginLimit, Window: AccountWindow, Lockout: AccountLockoutFor}
	pinBudget     = passwords.Budget{Max: PINLimit, Window: AttemptWindow, Lockout: LockoutFor}
)

// The key prefixes of SIP2's rows of login_throttle: its logins', and its PINs'
// (passwords.PINPrefix, which a patron's purge deletes too).
const (
	loginPrefix = "login:"
	pinPrefix   = passwords.PINPrefix
)

// newLimiter returns the throttle of SIP2 logins and PINs (keys), whose
// attempts wait for their turn for up to checkWait (Config.CheckWait). Its
// refusals are never shown: a terminal is answered 940 or told the PIN is
// locked.
func newLimiter(checkWait time.Duration) *passwords.Limiter {
	return &passwords.Limiter{
		Throttle: passwords.Throttle{MaxWaiting: maxLoginsWaiting, InFlightWait: checkWait},
		Words:    passwords.Words{Account: "this account", Failures: "failed attempts", Ask: "ask an administrator", Busy: passwords.ErrBusy},
		Keys:     keys,
	}
}

// noted holds the lockouts this server's attempts set or were refused by,
// until when (Attempt.Lockouts), so that a PIN remembered on a connection,
// which skips the database, can tell whether one may run (mayBeLocked). A
// lockout staff lifted, or one another process set that no attempt here was
// refused by yet, is not seen here: conn.isLocked reads it.
type noted struct {
	mu    sync.Mutex
	until map[string]time.Time
}

// note remembers lockouts.
func (n *noted) note(now time.Time, lockouts map[string]time.Time) {
	if len(lockouts) == 0 {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.until == nil {
		n.until = map[string]time.Time{}
	}
	if len(n.until) > 10000 {
		for k, u := range n.until {
			if !now.Before(u) {
				delete(n.until, k)
			}
		}
	}
	maps.Copy(n.until, lockouts)
}

// forget forgets the lockouts of keys (given back, or lifted).
func (n *noted) forget(keys ...string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, k := range keys {
		delete(n.until, k)
	}
}

// mayBeLocked reports whether a lockout of key noted here may still run at now.
func (n *noted) mayBeLocked(now time.Time, key string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	until, ok := n.until[key]
	return ok && now.Before(until)
}

// loginKey is the key of user's logins (a lower-cased username) from addr (an
// addrKey); accountKey, of the budget its unknown addresses share.
func loginKey(user, addr string) string { return loginPrefix + user + "|" + addr }
func accountKey(user string) string     { return loginPrefix + user }

// pinKey is the key of a patron's PINs (passwords.PINKey, which a purge
// deletes).
func pinKey(patronID int64) string { return passwords.PINKey(patronID) }

// knownAccount is the account name under which signin_addresses remembers the
// addresses a SIP account logged in from.
func knownAccount(user string) string { return "sip:" + user }

// keys are what an attempt under key (accountKey for a login, pinKey for a
// PIN) from addr counts and waits under. A login counts under the account at
// the address, and from an address not known for it under the account's
// budget too (first, so that a refusal by it is told as such); one is checked
// at a time per account and address, maxHostLoginsInFlight per address. A PIN
// counts under the patron, one checked at a time.
func keys(key, addr string, known bool) []passwords.Counted {
	if strings.HasPrefix(key, pinPrefix) {
		return []passwords.Counted{{Key: key, Budget: pinBudget, Forget: true, InFlight: 1}}
	}
	user := key[len(loginPrefix):]
	at := passwords.Counted{Key: loginKey(user, addr), Budget: loginBudget, Forget: true, InFlight: 1}
	host := passwords.Counted{Key: "login-host:" + addr, InFlight: maxHostLoginsInFlight}
	if known {
		return []passwords.Counted{at, host}
	}
	return []passwords.Counted{{Key: key, Budget: accountBudget}, at, host}
}

// Lockout is a SIP2 row of login_throttle as staff see it: failed attempts
// being counted, or a lockout running.
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

// lockoutOf reads a SIP2 key back into its kind, subject and address; ok is
// false for a key that is not SIP2's.
func lockoutOf(key string) (l Lockout, ok bool) {
	l.Key = key
	switch {
	case strings.HasPrefix(key, pinPrefix):
		l.Kind, l.Subject = "pin", key[len(pinPrefix):]
	case strings.HasPrefix(key, loginPrefix):
		l.Kind, l.Subject = "login", key[len(loginPrefix):]
		// No address has a "|": the last one parts username and address.
		if i := strings.LastIndex(l.Subject, "|"); i >= 0 {
			l.Subject, l.Address = l.Subject[:i], l.Subject[i+1:]
		}
	default:
		return l, false
	}
	return l, true
}

// ListLockouts returns the lockouts running and the failures being counted at
// now (windows of 15 minutes), newest first. An account's budget (a login row
// without an address) is listed while it is locked: the failures it counts,
// spread over an hour and many addresses, are each in the log.
func ListLockouts(tx *db.Tx) ([]Lockout, error) {
	now := tx.Now()
	rows, err := passwords.ListLocks(tx, now.Add(-AttemptWindow), 500, loginPrefix, pinPrefix)
	if err != nil {
		return nil, err
	}
	var out []Lockout
	for _, r := range rows {
		l, ok := lockoutOf(r.Key)
		if !ok || (l.Kind == "login" && l.Address == "" && !r.Locked(now)) {
			continue
		}
		l.Failures, l.WindowStart, l.LockedUntil = r.Failures, r.FirstAt, r.LockedUntil
		out = append(out, l)
	}
	return out, nil
}

// ClearLockout lifts a lockout (and forgets its failures), audited. Only SIP2's
// keys are lifted here; staff and patrons' sign-in throttles are not.
func ClearLockout(tx *db.Tx, actor stacks.Actor, key string) error {
	lifted := false
	if _, ok := lockoutOf(key); ok {
		var err error
		if lifted, err = passwords.Lift(tx, key); err != nil {
			return err
		}
	}
	if !lifted {
		return stacks.Errorf(stacks.ENOTFOUND, "That lockout has ended already.")
	}
	return tx.Audit(actor, "sip.lockout.clear", "sip_lockout", 0, key)
}
