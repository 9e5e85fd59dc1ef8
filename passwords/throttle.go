package passwords

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/stacks-ils/stacks"
	"github.com/stacks-ils/stacks/db"
)

// Throttle limits failed sign-ins: after MaxFailures failures within Window for one
// account (a staff account, a patron's card), or MaxAddrFailures from one address,
// sign-ins for it are refused for Lockout. The address limit is higher: a
// branch's desks may share one address. An address is an IPv4 address or an
// IPv6 /64 (AddrKey).
//
// The account's count is shared by the addresses it has not signed in from
// within KnownFor: guesses rotated over many addresses meet one budget of
// MaxFailures a Window, and spending it locks only those addresses out. From
// an address the account signed in from before (a desk, a patron's home),
// failures count for that account and address alone, so that guesses from
// elsewhere never lock them out.
//
// Every attempt is counted before its password is compared, in the same write
// transaction that checks the lock (a success takes its count back), and at most
// MaxInFlight attempts per account and MaxAddrInFlight per address are checked at
// a time; more are refused at once. Guesses sent in parallel therefore cannot
// slip past the lock while the first ones are still being compared.
type Throttle struct {
	MaxFailures     int
	MaxAddrFailures int
	Window          time.Duration
	Lockout         time.Duration
	// MaxInFlight attempts per account and MaxAddrInFlight per address are checked
	// at a time; MaxWaiting more per account and per address may wait for their
	// turn, for at most InFlightWait; more are refused at once. Waiting is what
	// lets many desks sharing one account and one address (a branch behind NAT,
	// the load tool) sign in at once: each right password takes its count back
	// before the next is checked. A guess that waits is refused without a
	// comparison as soon as the account is locked, so waiting never adds
	// comparisons.
	MaxInFlight     int
	MaxAddrInFlight int
	MaxWaiting      int
	InFlightWait    time.Duration
}

// DefaultThrottle is the throttle of staff and patrons' sign-in: five failures
// within fifteen minutes lock an account for fifteen minutes, twenty lock an
// address.
var DefaultThrottle = Throttle{MaxFailures: 5, MaxAddrFailures: 20, Window: 15 * time.Minute, Lockout: 15 * time.Minute,
	MaxInFlight: 1, MaxAddrInFlight: 4, MaxWaiting: 128, InFlightWait: 10 * time.Second}

// Words are what a Limiter's refusals say, in the words of its site.
type Words struct {
	// AddrPrefix starts the keys of addresses in login_throttle ("addr:" for
	// staff, "opac:" for patrons), so that one site's failures never lock the
	// other's users out.
	AddrPrefix string
	// Account and Failures complete "Too many <Failures> for <Account>"
	// ("failed sign-ins", "this account"); Ask ends the refusal ("ask an
	// administrator").
	Account, Failures, Ask string
	// Busy refuses an attempt while another for the same account, or too many
	// from the same address, are being checked.
	Busy error
}

// Limiter counts the sign-in attempts of one site under Throttle, in
// login_throttle, and admits a few at a time per account and per address.
// Staff sign-in and patrons' sign-in each have one under DefaultThrottle; SIP2
// has one for its logins and PINs, whose keys, budgets and in-flight limits it
// chooses itself (Keys).
type Limiter struct {
	Throttle Throttle
	Words    Words
	// Keys, when set, chooses what an attempt for the account's key (Begin's
	// key) from addrKey is counted and waits under, told whether the address
	// is known for the account; nil chooses defaultKeys under Throttle. Only
	// Throttle's MaxWaiting and InFlightWait apply to the keys it chooses.
	Keys func(key, addrKey string, known bool) []Counted

	// inFlight holds the attempts being checked, per key.
	inFlight Gate
}

// Attempt is one sign-in going through a Limiter: Begin reads its locks, Wait
// takes its turn, Count counts it before its password is compared, Succeeded
// takes the count back (NotCompared when it was never compared), and Done ends
// its turn.
type Attempt struct {
	l *Limiter
	// keys are what the attempt is counted and waits under (Limiter.Keys).
	keys    []Counted
	account string
	addr    string
	leave   func()
	// refused is the key whose lockout refused the attempt; lockouts, that
	// lockout or the ones this attempt's count set, until when.
	refused  string
	lockouts map[string]time.Time
}

// defaultKeys are the keys of staff's and patrons' sign-in under t: the
// account's (at the address when the address is known, else the budget its
// unknown addresses share), one attempt at a time, and the address's
// (under addrPrefix, Words.AddrPrefix), a few at a time.
func defaultKeys(t Throttle, addrPrefix, key, addrKey string, known bool) []Counted {
	budget := Budget{Max: t.MaxFailures, Window: t.Window, Lockout: t.Lockout}
	addrCount := Counted{Key: addrPrefix + addrKey, Budget: Budget{Max: t.MaxAddrFailures, Window: t.Window, Lockout: t.Lockout},
		InFlight: t.MaxAddrInFlight}
	if known {
		// Its failures count for this address alone, and its turn is taken
		// under that key too: guesses from elsewhere, which share the
		// account's key, can neither lock it out nor hold its turn. A space,
		// which no possible name has, parts name and address: no name can
		// make its key another account's key at an address.
		return []Counted{{Key: key + " " + addrKey, Budget: budget, Forget: true, InFlight: t.MaxInFlight}, addrCount}
	}
	return []Counted{{Key: key, Budget: budget, InFlight: t.MaxInFlight}, addrCount}
}

// Begin starts an attempt for the account whose login_throttle key is key
// ("user:desk", "card:P0001", "login:kiosk"), from addr, inside the read
// transaction in which the caller reads what else it needs: one statement
// reads the locks of its keys and whether account (the name of
// signin_addresses, "" when no account can have the name tried) signed in from
// addr before. A locked key refuses the attempt (ETOOMANY) before it waits for
// a turn. With tx nil nothing is read (keys that never depend on the address,
// as SIP2's PINs): Count refuses a locked key.
func (l *Limiter) Begin(tx *db.Tx, key, account, addr string) (*Attempt, error) {
	addrKey := AddrKey(addr)
	keys := func(known bool) []Counted {
		if l.Keys != nil {
			return l.Keys(key, addrKey, known)
		}
		return defaultKeys(l.Throttle, l.Words.AddrPrefix, key, addrKey, known)
	}
	if tx == nil {
		return &Attempt{l: l, keys: keys(false), addr: addrKey}, nil
	}
	var names []string
	for _, known := range []bool{true, false} {
		if known && account == "" {
			continue
		}
		for _, k := range keys(known) {
			if k.Budget.Max > 0 && !slices.Contains(names, k.Key) {
				names = append(names, k.Key)
			}
		}
	}
	locks, err := ReadLocks(tx, account, addrKey, names...)
	if err != nil {
		return nil, err
	}
	a := &Attempt{l: l, keys: keys(locks.Known), account: account, addr: addrKey}
	return a, a.lockedError(tx.Now(), locks.Until)
}

// Wait takes the attempt's turn under each of its keys with an in-flight limit
// (defaultKeys: one attempt per account and a few per address), waiting for at
// most Throttle.InFlightWait, so that parallel guesses cannot pass the lock
// before the first is counted. It returns Words.Busy when no turn came.
func (a *Attempt) Wait(ctx context.Context) error {
	var gates []Key
	for _, k := range a.keys {
		if k.InFlight > 0 {
			gates = append(gates, Key{Name: k.Key, Max: k.InFlight, MaxWaiting: a.l.Throttle.MaxWaiting})
		}
	}
	leave, ok := a.l.inFlight.Enter(ctx, a.l.Throttle.InFlightWait, gates...)
	if !ok {
		return a.l.Words.Busy
	}
	a.leave = leave
	return nil
}

// Done ends the attempt's turn (after Wait).
func (a *Attempt) Done() {
	if a.leave != nil {
		a.leave()
	}
}

// Count counts the attempt under all its keys, inside the write transaction
// that reads the password's hash, in one statement that refuses a locked key
// (CountFailure): no other attempt can come between the check and the count.
// A refused attempt returns its ETOOMANY, on which the caller rolls tx back and
// with it the counts of the keys that were not locked. The attempt that
// reaches a limit is still compared (Lockouts says which it set), the ones
// after it are refused.
func (a *Attempt) Count(tx *db.Tx) error {
	set, refused, err := CountFailure(tx, a.keys)
	if err != nil {
		return err
	}
	if len(refused) > 0 {
		return a.lockedError(tx.Now(), refused)
	}
	a.lockouts = set
	return nil
}

// Lockouts are the lockout that refused the attempt (Refused) or the ones its
// count set (the attempt that reaches a limit is still compared), until when:
// what a caller that checks without the database (SIP2's remembered PINs)
// notes.
func (a *Attempt) Lockouts() map[string]time.Time { return a.lockouts }

// Refused is the key whose lockout refused the attempt ("" when none did).
func (a *Attempt) Refused() string { return a.refused }

// Succeeded takes back the count of an attempt whose password was right
// (GiveBack), and remembers its address as known for its account, inside the
// transaction that records the sign-in.
func (a *Attempt) Succeeded(tx *db.Tx) error {
	if err := GiveBack(tx, a.keys, true); err != nil {
		return err
	}
	if a.account == "" {
		return nil
	}
	return RememberAddress(tx, a.account, a.addr)
}

// NotCompared gives back an attempt that was counted but never compared (the
// comparison pool had no room in time), with any lockout it set: an innocent
// patron is never locked out by the server being busy.
func (a *Attempt) NotCompared(tx *db.Tx) error {
	return GiveBack(tx, a.keys, false)
}

// lockedError refuses a sign-in while one of its keys is locked at now, saying
// which and for how long.
func (a *Attempt) lockedError(now time.Time, until map[string]time.Time) error {
	w := a.l.Words
	for _, k := range a.keys {
		if wait := until[k.Key].Sub(now); wait > 0 {
			a.refused, a.lockouts = k.Key, map[string]time.Time{k.Key: until[k.Key]}
			mins := max(int(wait.Round(time.Minute)/time.Minute), 1)
			what := w.Account
			if w.AddrPrefix != "" && strings.HasPrefix(k.Key, w.AddrPrefix) {
				what = "this computer"
			}
			return stacks.Errorf(stacks.ETOOMANY, "Too many %s for %s. Wait %d minute(s) and try again, or %s.", w.Failures, what, mins, w.Ask)
		}
	}
	return nil
}
